import Glibc
import NavSyncCore
import XCTest

/// The log lines' timestamp is date arithmetic in the core; the C library's
/// `gmtime_r` is the reference it must agree with.
final class UTCTimestampTests: XCTestCase {
    func test_text_writesKnownInstants() {
        let table: [(seconds: Int, milliseconds: Int, text: String)] = [
            (0, 0, "1970-01-01T00:00:00.000Z"),
            (0, 7, "1970-01-01T00:00:00.007Z"),
            (68_169_600, 45, "1972-02-29T00:00:00.045Z"),
            (951_782_400, 999, "2000-02-29T00:00:00.999Z"),
            (951_868_799, 100, "2000-02-29T23:59:59.100Z"),
            (1_795_000_000, 123, "2026-11-18T11:06:40.123Z"),
            (1_798_502_399, 0, "2026-12-28T23:59:59.000Z"),
            (4_102_444_800, 0, "2100-01-01T00:00:00.000Z"),
            (253_402_300_799, 999, "9999-12-31T23:59:59.999Z"),
            (-1, 0, "1969-12-31T23:59:59.000Z"),
        ]
        for row in table {
            XCTAssertEqual(UTCTimestamp.text(seconds: row.seconds, milliseconds: row.milliseconds), row.text, "\(row.seconds)")
        }
    }

    func test_text_agreesWithGmtimeAcrossCenturies() {
        var random = SplitMix64(seed: 19)
        for _ in 0..<20_000 {
            // 1900 to 2400: leap years, the skipped 2100 and 2200, and the kept 2000.
            let seconds = Int(random.next() % 15_778_800_000) - 2_208_988_800
            XCTAssertEqual(UTCTimestamp.text(seconds: seconds, milliseconds: 0), reference(seconds), "\(seconds)")
        }
    }

    private func reference(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).000Z"
    }
}
