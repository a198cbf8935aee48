import XCTest

/// Lines on the wire: terminators, blank lines, verb case, pipelining and
/// half-closed connections.
final class DaemonFramingTests: XCTestCase {
    func test_pipelining_thousandCommandsInOneWrite_thousandRepliesInOrder() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        var script = ""
        var expected: [String] = []
        var revision = 0
        for i in 0..<1000 {
            switch i % 4 {
            case 0:
                script += "PING \(i)\n"
                expected.append("PONG \(i)")
            case 1:
                // Alternates red/green, so every SELECT is a real change.
                revision += 1
                script += "SELECT \(revision % 2 == 1 ? "green" : "red")\n"
                expected.append("OK \(revision)")
            case 2:
                script += "GET\n"
                expected.append("STATE \(revision) /\(revision % 2 == 1 ? "green" : "red")")
            default:
                script += "FROB \(i)\n"
                expected.append("ERR unknown-command")
            }
        }
        client.send(script)
        let replies = try client.readLines(1000, timeout: 15)
        for (i, (reply, want)) in zip(replies, expected).enumerated() {
            if want.hasPrefix("ERR ") {
                XCTAssertTrue(reply.hasPrefix(want + " "), "reply \(i): \(reply)")
            } else {
                XCTAssertEqual(reply, want, "reply \(i)")
            }
        }
        XCTAssertTrue(client.staysQuiet(for: 0.1), "more than 1,000 replies")
    }

    func test_pipelining_hundredThousandCommandsWhileReading_noReplyLostOrReordered() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        let count = 100_000
        // The writer outruns the reader, so the daemon has to hold back reading.
        let writerDone = DispatchGroup()
        writerDone.enter()
        Thread {
            defer { writerDone.leave() }
            var script = ""
            for i in 0..<count { script += "PING \(i)\n" }
            client.sendBytes(Array(script.utf8), timeout: 30)
        }.start()
        for i in 0..<count {
            let line = try client.readLine(timeout: 20)
            guard line == "PONG \(i)" else {
                XCTFail("reply \(i) is \(line)")
                break
            }
        }
        XCTAssertEqual(writerDone.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(try client.request("GET"), "STATE 0 /red")
    }

    func test_fanOut_threeHundredWatchers_allGetTheEvent() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let watchers = try (0..<300).map { _ in try daemon.connect() }
        for watcher in watchers { watcher.send("WATCH\n") }
        for watcher in watchers { XCTAssertEqual(try watcher.readLine(), "STATE 0 /red") }
        let actor = try daemon.connect()
        XCTAssertEqual(try actor.request("PUSH blue to everyone"), "OK 1")
        for watcher in watchers { XCTAssertEqual(try watcher.readLine(), "EVENT 1 push /red/blue:to%20everyone") }
        XCTAssertTrue(try actor.requestList("STATS").contains("STAT watchers_total 300"))
        for watcher in watchers { watcher.close() }
        actor.close()
    }

    func test_framing_crlfLines_workAndCarriageReturnIsNotData() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        client.send("GET\r\nPUSH blue hi there\r\nPING x\r\n")
        XCTAssertEqual(try client.readLines(3), ["STATE 0 /red", "OK 1", "PONG x"])
        XCTAssertEqual(try client.request("GET\r"), "STATE 1 /red/blue:hi%20there")
    }

    func test_framing_blankLines_getNoReply() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        client.send("\n\r\n   \n\t \t\n \r\nPING after blanks\n")
        // Replies are in order, so anything said about a blank line would come first.
        XCTAssertEqual(try client.readLine(), "PONG after blanks")
        client.send("\n\n\n")
        XCTAssertTrue(client.staysQuiet(for: 0.2))
    }

    func test_framing_tokensSeparatedByRunsOfSpacesAndTabs() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        XCTAssertEqual(try client.request(" \t PUSH \t  blue \t some  data \t "), "OK 1")
        XCTAssertEqual(try client.request("GET"), "STATE 1 /red/blue:some%20%20data")
        XCTAssertEqual(try client.request("PING \t  two  words \t"), "PONG two  words")
        XCTAssertEqual(try client.request("PING"), "PONG")
    }

    func test_verbs_anyCase_areAccepted_screenNamesAreNot() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("get"), "STATE 0 /red")
        XCTAssertEqual(try client.request("Get"), "STATE 0 /red")
        XCTAssertEqual(try client.request("sElEcT green"), "OK 1")
        XCTAssertEqual(try client.request("push blue"), "OK 2")
        XCTAssertEqual(try client.request("Pop"), "OK 3")
        XCTAssertEqual(try client.request("next"), "OK 4")
        XCTAssertEqual(try client.request("root"), "OK 4")
        XCTAssertEqual(try client.request("open /red/green"), "OK 5")
        XCTAssertEqual(try client.request("if 5 Select red"), "OK 6")
        XCTAssertEqual(try client.request("watch"), "STATE 6 /red")
        XCTAssertEqual(try client.request("unwatch"), "OK 6")
        XCTAssertEqual(try client.request("join other"), "STATE 0 /red")
        XCTAssertEqual(try client.request("ping hi"), "PONG hi")
        XCTAssertTrue(try client.request("hello").hasPrefix("HELLO navsync 1 "))
        XCTAssertEqual(try client.requestList("screens").last, "END")
        XCTAssertEqual(try client.requestList("stats").last, "END")
        XCTAssertEqual(try client.requestList("help").last, "END")
        XCTAssertTrue(try client.request("SELECT Green").hasPrefix("ERR unknown-screen "))
        XCTAssertTrue(try client.request("SELECT RED").hasPrefix("ERR unknown-screen "))
        XCTAssertEqual(try client.request("quit"), "BYE")
        XCTAssertEqual(try client.readUntilClosed(), [])
    }

    func test_halfClose_afterCommands_allRepliesThenServerCloses() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        var script = "GET\nSELECT green\n"
        for i in 0..<200 { script += "PING \(i)\n" }
        script += "GET\n"
        client.send(script)
        client.shutdownWrite()
        let lines = try client.readUntilClosed()
        XCTAssertEqual(lines.count, 203)
        XCTAssertEqual(lines.first, "STATE 0 /red")
        XCTAssertEqual(lines.dropFirst().first, "OK 1")
        XCTAssertEqual(Array(lines.dropFirst(2).prefix(200)), (0..<200).map { "PONG \($0)" })
        XCTAssertEqual(lines.last, "STATE 1 /green")
    }

    func test_halfClose_watcher_isAnsweredThenClosed() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let actor = try daemon.connect()
        XCTAssertEqual(try actor.request("SELECT green"), "OK 1")
        XCTAssertEqual(try actor.request("PUSH blue x"), "OK 2")
        // End of input means the client is gone, watching or not.
        let watcher = try daemon.connect()
        watcher.send("WATCH\n")
        watcher.shutdownWrite()
        XCTAssertEqual(try watcher.readUntilClosed(), ["STATE 2 /green/blue:x"])
        let resumer = try daemon.connect()
        resumer.send("WATCH 0")
        resumer.shutdownWrite()
        XCTAssertEqual(try resumer.readUntilClosed(),
                       ["CONTINUE 0", "EVENT 1 select /green", "EVENT 2 push /green/blue:x"],
                       "the replay is part of the answer")
        let stats = try actor.requestList("STATS")
        XCTAssertTrue(stats.contains("STAT watchers 0"), "\(stats)")
    }
}
