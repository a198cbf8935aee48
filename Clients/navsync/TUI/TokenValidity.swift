import Glibc

/// What the status line says about a signed token (COMMANDS.md): until
/// when it is valid, or that it has expired, in local time.
enum TokenValidity {
    /// `token until 18:00`, or `token expired at 18:00`; the date is added
    /// when it is not today.
    /// The same, against the clock now.
    static func words(expires: UInt64) -> String { words(expires: expires, now: UInt64(max(0, time(nil)))) }

    static func words(expires: UInt64, now: UInt64) -> String {
        let when = clock(expires, sameDayAs: now)
        return now >= expires ? "token expired at \(when)" : "token until \(when)"
    }

    private static func clock(_ seconds: UInt64, sameDayAs now: UInt64) -> String {
        var time = time_t(seconds), today = time_t(now)
        var parts = tm(), nowParts = tm()
        localtime_r(&time, &parts)
        localtime_r(&today, &nowParts)
        let hhmm = two(parts.tm_hour) + ":" + two(parts.tm_min)
        guard parts.tm_year != nowParts.tm_year || parts.tm_yday != nowParts.tm_yday else { return hhmm }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(hhmm)"
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
