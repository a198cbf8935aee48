import XCTest
import NavSyncCore
@testable import NavSyncServer

/// The logger and close reasons the server reports with.
final class LoggerTests: XCTestCase {
    func test_logger_dropsLinesBelowItsLevelWithoutFormattingThem() {
        var lines: [(LogLevel, String)] = []
        let log = Logger(level: .warn) { lines.append(($0, $1)) }
        var formatted = 0
        func message(_ text: String) -> String { formatted += 1; return text }
        log.debug(message("d"))
        log.info(message("i"))
        log.warn(message("w"))
        log.error(message("e"))
        XCTAssertEqual(lines.map(\.1), ["w", "e"])
        XCTAssertEqual(lines.map(\.0), [.warn, .error])
        XCTAssertEqual(formatted, 2)
        XCTAssertFalse(log.isDebugEnabled)
        XCTAssertTrue(Logger(level: .debug) { _, _ in }.isDebugEnabled)
    }

    func test_logLevel_namesRoundTripAndOrder() {
        for level in LogLevel.allCases { XCTAssertEqual(LogLevel(name: level.name), level) }
        XCTAssertNil(LogLevel(name: "verbose"))
        XCTAssertNil(LogLevel(name: "WARN"))
        XCTAssertEqual(LogLevel.allCases.sorted(), [.debug, .info, .warn, .error])
        XCTAssertLessThan(LogLevel.info, LogLevel.warn)
    }

    func test_logger_silentDropsEverything() {
        let log = Logger.silent
        var evaluated = false
        log.warn({ evaluated = true; return "x" }())
        XCTAssertFalse(evaluated)
        XCTAssertFalse(log.isDebugEnabled)
    }

    func test_closeReason_describesEveryCase() {
        let reasons: [CloseReason] = [.peerClosed, .transportError("ECONNRESET"), .quit, .busy, .authFailed, .shutdown]
        let descriptions = reasons.map(\.description)
        XCTAssertEqual(Set(descriptions).count, reasons.count)
        XCTAssertEqual(CloseReason.transportError("EPIPE").description, "transport error: EPIPE")
        XCTAssertNotEqual(CloseReason.transportError("a"), .transportError("b"))
        XCTAssertFalse(descriptions.contains(""))
    }

    func test_server_logsEveryDisconnectWithItsReason() throws {
        let hub = try Hub(limits: limits(maxClients: 3), token: "t")
        let quitter = hub.connect(peer: "10.0.0.1:1"), eof = hub.connect(peer: "10.0.0.2:2")
        let guesser = hub.connect(peer: "10.0.0.3:3")
        _ = hub.connect(peer: "10.0.0.4:4")
        quitter.run("QUIT")
        eof.inputEnded()
        guesser.run("AUTH a", "AUTH b", "AUTH c")
        hub.flush()
        let closes = hub.logLines.map(\.1).filter { $0.contains("closed:") }
        XCTAssertEqual(closes.count, 4, "\(closes)")
        XCTAssertTrue(closes.contains { $0.contains("10.0.0.1:1") && $0.contains(CloseReason.quit.description) })
        XCTAssertTrue(closes.contains { $0.contains("10.0.0.2:2") && $0.contains(CloseReason.peerClosed.description) })
        XCTAssertTrue(closes.contains { $0.contains("10.0.0.3:3") && $0.contains(CloseReason.authFailed.description) })
        XCTAssertTrue(closes.contains { $0.contains("10.0.0.4:4") && $0.contains(CloseReason.busy.description) })
    }
}
