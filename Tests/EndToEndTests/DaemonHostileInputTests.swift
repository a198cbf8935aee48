import NavSyncCore
import XCTest

/// Input no well-behaved client sends: overlong lines, NUL bytes, broken
/// UTF-8, random binary. The daemon answers, survives, and the connection
/// stays usable.
final class DaemonHostileInputTests: XCTestCase {
    func test_lineTooLong_oneMebibyteLine_oneErrorThenConnectionWorks() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        client.sendBytes(Array("PUSH blue ".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20) + [10])
        client.send("PING still here\n")
        let first = try client.readLine()
        XCTAssertTrue(first.hasPrefix("ERR line-too-long "), first)
        XCTAssertEqual(try client.readLine(), "PONG still here")
        XCTAssertEqual(try client.request("GET"), "STATE 0 /red", "the overlong PUSH must not run")
        XCTAssertTrue(daemon.process.isRunning)
    }

    func test_lineTooLong_isAnsweredBeforeTheNewlineArrives() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        client.sendBytes([UInt8](repeating: UInt8(ascii: "y"), count: 5000))
        let reply = try client.readLine()
        XCTAssertTrue(reply.hasPrefix("ERR line-too-long "), reply)
        // The rest of that line is thrown away, however long, up to its newline.
        client.sendBytes([UInt8](repeating: UInt8(ascii: "y"), count: 100_000) + Array("\nPING next\n".utf8))
        XCTAssertEqual(try client.readLine(), "PONG next")
    }

    func test_maxLine_exactlyTheLimitIsAccepted_oneMoreIsNot() throws {
        let daemon = try DaemonProcess(arguments: ["--max-line", "64"], state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        let atLimit = "PING " + String(repeating: "a", count: 59)  // 64 bytes
        XCTAssertEqual(try client.request(atLimit), "PONG " + String(repeating: "a", count: 59))
        XCTAssertEqual(try client.request(atLimit + "\r"), "PONG " + String(repeating: "a", count: 59),
                       "the \\r of \\r\\n does not count")
        XCTAssertTrue(try client.request(atLimit + "b").hasPrefix("ERR line-too-long "))
        XCTAssertEqual(try client.request("PING ok"), "PONG ok")
    }

    func test_nulBytes_areDataNotTerminators_andNeverCrash() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        client.sendBytes([0, 0, 0, 10])
        XCTAssertTrue(try client.readLine().hasPrefix("ERR unknown-command "))
        client.sendBytes(Array("GE".utf8) + [0] + Array("T\n".utf8))
        XCTAssertTrue(try client.readLine().hasPrefix("ERR unknown-command "))
        // NUL is valid UTF-8: as data it is kept and percent-encoded.
        client.sendBytes(Array("PUSH blue a".utf8) + [0] + Array("b\n".utf8))
        XCTAssertEqual(try client.readLine(), "OK 1")
        XCTAssertEqual(try client.request("GET"), "STATE 1 /red/blue:a%00b")
        XCTAssertTrue(daemon.process.isRunning)
    }

    func test_invalidUTF8_isBadEncoding_andConnectionStaysUsable() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        let broken: [[UInt8]] = [
            [0xFF, 0xFE],  // never valid
            [0xC0, 0xAF],  // overlong "/"
            [0xED, 0xA0, 0x80],  // a UTF-16 surrogate
            [0xE2, 0x82],  // truncated sequence
            [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
        ]
        for bytes in broken {
            client.sendBytes(Array("PUSH blue ".utf8) + bytes + [10])
            let reply = try client.readLine()
            XCTAssertTrue(reply.hasPrefix("ERR bad-encoding "), "\(bytes): \(reply)")
        }
        client.sendBytes([0x80, 0x80, 10])
        XCTAssertTrue(try client.readLine().hasPrefix("ERR bad-encoding "))
        XCTAssertEqual(try client.request("GET"), "STATE 0 /red")
        XCTAssertEqual(try client.request("PUSH blue h\u{E9}llo \u{65E5}\u{672C}"), "OK 1")
        XCTAssertEqual(try client.request("GET"), "STATE 1 /red/blue:h%C3%A9llo%20%E6%97%A5%E6%9C%AC")
    }

    func test_randomBinary_seeded_neverCrashes_connectionUsableAfterNewline() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        for seed in [1, 2, 3, 0xC0FFEE] as [UInt64] {
            var random = SplitMix64(seed: seed)
            let client = try daemon.connect()
            var garbage = (0..<60_000).map { _ in UInt8.random(in: 0...255, using: &random) }
            // Also a long stretch with no newline at all.
            garbage += (0..<20_000).map { _ in UInt8.random(in: 11...255, using: &random) }
            for chunk in stride(from: 0, to: garbage.count, by: 4096) {
                client.sendBytes(Array(garbage[chunk..<min(chunk + 4096, garbage.count)]))
            }
            client.send("\nPING alive \(seed)\n")
            var replies = 0
            while true {
                let line = try client.readLine(timeout: 20)
                if line == "PONG alive \(seed)" { break }
                replies += 1
                XCTAssertTrue(line.hasPrefix("ERR ") || line.hasPrefix("OK ") || line.hasPrefix("STATE ")
                              || line.hasPrefix("PONG") || line.hasPrefix("HELLO "), "seed \(seed): \(line)")
            }
            XCTAssertGreaterThan(replies, 0, "garbage should have drawn some errors")
            XCTAssertTrue(daemon.process.isRunning, "seed \(seed)")
            let fresh = try daemon.connect()
            XCTAssertEqual(try fresh.request("PING fresh"), "PONG fresh")
            client.close()
            fresh.close()
        }
    }
}
