/// The timestamp at the start of every log line the daemon and the client
/// write: `2026-11-29T15:04:05.123Z`, UTC, millisecond precision. Pure date
/// arithmetic on a time the caller read, so both logs write it one way and
/// a test can pin it without a clock.
public enum UTCTimestamp {
    /// `seconds` since 1970-01-01 UTC (leap seconds ignored, as POSIX time
    /// does) and `milliseconds` within that second, 0 to 999.
    public static func text(seconds: Int, milliseconds: Int) -> String {
        let secondsPerDay = 86_400
        var days = seconds / secondsPerDay
        var secondOfDay = seconds % secondsPerDay
        if secondOfDay < 0 {
            secondOfDay += secondsPerDay
            days -= 1
        }
        let (year, month, day) = civilDate(daysSince1970: days)
        return "\(year)-\(padded(month, 2))-\(padded(day, 2))T"
            + "\(padded(secondOfDay / 3600, 2)):\(padded(secondOfDay / 60 % 60, 2)):\(padded(secondOfDay % 60, 2))."
            + "\(padded(milliseconds, 3))Z"
    }

    /// The proleptic Gregorian date of a day count. Days are counted from
    /// 0000-03-01 so that the leap day falls at the end of each counted year,
    /// and years are grouped in 400-year cycles of 146,097 days, which repeat exactly.
    static func civilDate(daysSince1970: Int) -> (year: Int, month: Int, day: Int) {
        let daysPerCycle = 146_097
        let fromMarchOfYear0 = daysSince1970 + 719_468
        let cycle = (fromMarchOfYear0 >= 0 ? fromMarchOfYear0 : fromMarchOfYear0 - (daysPerCycle - 1)) / daysPerCycle
        let dayOfCycle = fromMarchOfYear0 - cycle * daysPerCycle
        // Take out the leap days (one per 4 years, none per 100, one per 400) to find the year in the cycle.
        let yearOfCycle = (dayOfCycle - dayOfCycle / 1460 + dayOfCycle / 36_524 - dayOfCycle / (daysPerCycle - 1)) / 365
        let dayOfYear = dayOfCycle - (365 * yearOfCycle + yearOfCycle / 4 - yearOfCycle / 100)
        // Months from March: 31 30 31 30 31 31 30 31 30 31 31 28/29, which 153 days per 5 months fits.
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfCycle + cycle * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func padded(_ number: Int, _ width: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
