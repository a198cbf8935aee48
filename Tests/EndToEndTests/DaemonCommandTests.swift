import XCTest

/// What each command does and answers, seen from real connections.
final class DaemonCommandTests: XCTestCase {
    func test_noOpChange_keepsRevision_sendsNoEvent() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let watcher = try daemon.connect()
        let actor = try daemon.connect()
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try actor.request("SELECT red"), "OK 0")
        XCTAssertEqual(try actor.request("ROOT"), "OK 0")
        XCTAssertEqual(try actor.request("OPEN /red"), "OK 0")
        XCTAssertEqual(try actor.request("PUSH blue  "), "OK 1", "empty data is no data")
        XCTAssertEqual(try actor.request("OPEN /red/blue"), "OK 1")
        XCTAssertEqual(try actor.request("PUSH blue hi"), "OK 2")
        XCTAssertEqual(try actor.request("OPEN /red/blue/blue:hi"), "OK 2")
        // Only real changes reached the watcher, in order, with nothing between.
        XCTAssertEqual(try watcher.readLines(2), ["EVENT 1 push /red/blue", "EVENT 2 push /red/blue/blue:hi"])
        XCTAssertTrue(watcher.staysQuiet(for: 0.1))
    }

    func test_eachMutation_sendsItsLowercaseOpAndWholeRoute() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let watcher = try daemon.connect()
        let actor = try daemon.connect()
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red")
        let steps: [(String, String)] = [
            ("SELECT green", "EVENT 1 select /green"),
            ("PUSH blue a b", "EVENT 2 push /green/blue:a%20b"),
            ("PUSH red", "EVENT 3 push /green/blue:a%20b/red"),
            ("POP", "EVENT 4 pop /green/blue:a%20b"),
            ("NEXT", "EVENT 5 next /green/red"),
            ("ROOT", "EVENT 6 root /green"),
            ("NEXT note/with:odd%chars+", "EVENT 7 next /blue:note%2Fwith%3Aodd%25chars%2B"),
            ("NEXT", "EVENT 8 next /red"),
            ("OPEN /blue:x%2fy/green", "EVENT 9 open /blue:x%2Fy/green"),
            ("IF 9 SELECT red", "EVENT 10 select /red"),
        ]
        for (i, (command, event)) in steps.enumerated() {
            XCTAssertEqual(try actor.request(command), "OK \(i + 1)", command)
            XCTAssertEqual(try watcher.readLine(), event, command)
        }
        XCTAssertEqual(try actor.request("GET"), "STATE 10 /red")
    }

    func test_watch_again_givesFreshSnapshot_unwatchStopsEvents() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let watcher = try daemon.connect()
        let actor = try daemon.connect()
        XCTAssertEqual(try watcher.request("UNWATCH"), "OK 0", "harmless when not watching")
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try actor.request("SELECT green"), "OK 1")
        XCTAssertEqual(try watcher.readLine(), "EVENT 1 select /green")
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 1 /green")
        XCTAssertEqual(try actor.request("SELECT blue"), "OK 2")
        XCTAssertEqual(try watcher.readLine(), "EVENT 2 select /blue", "one event, not two, after a second WATCH")
        XCTAssertEqual(try watcher.request("UNWATCH"), "OK 2")
        XCTAssertEqual(try actor.request("SELECT red"), "OK 3")
        XCTAssertEqual(try watcher.request("PING"), "PONG", "no event after UNWATCH")
    }

    func test_join_movesWatchToTheNewRoom_roomsAreIsolated() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let watcher = try daemon.connect()
        let inMain = try daemon.connect()
        let inKitchen = try daemon.connect()
        XCTAssertEqual(try inKitchen.request("JOIN kitchen"), "STATE 0 /red")
        XCTAssertEqual(try inKitchen.request("SELECT blue"), "OK 1")
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try watcher.request("JOIN kitchen"), "STATE 1 /blue")
        XCTAssertEqual(try inMain.request("SELECT green"), "OK 1")
        XCTAssertEqual(try inKitchen.request("PUSH green"), "OK 2")
        XCTAssertEqual(try watcher.readLine(), "EVENT 2 push /blue/green", "only the kitchen's event")
        XCTAssertEqual(try watcher.request("JOIN main"), "STATE 1 /green")
        XCTAssertEqual(try inMain.request("GET"), "STATE 1 /green")
        XCTAssertEqual(try inKitchen.request("GET"), "STATE 2 /blue/green")
        XCTAssertEqual(try watcher.request("JOIN a.B_c-9"), "STATE 0 /red")
        XCTAssertEqual(try watcher.request("JOIN " + String(repeating: "x", count: 64)), "STATE 0 /red")
    }

    func test_next_replacesTopWithItsNext_carryingOnlyTheGivenData() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let c = try daemon.connect()
        XCTAssertEqual(try c.request("OPEN /green/blue:old"), "OK 1")
        XCTAssertEqual(try c.request("NEXT"), "OK 2")
        XCTAssertEqual(try c.request("GET"), "STATE 2 /green/red")
        XCTAssertEqual(try c.request("NEXT"), "OK 3")
        XCTAssertEqual(try c.request("GET"), "STATE 3 /green/green")
        XCTAssertEqual(try c.request("NEXT  new  data "), "OK 4")
        XCTAssertEqual(try c.request("GET"), "STATE 4 /green/blue:new%20%20data")
        XCTAssertTrue(try c.request("NEXT more").hasPrefix("ERR bad-args "), "red takes no data")
        XCTAssertEqual(try c.request("GET"), "STATE 4 /green/blue:new%20%20data")
    }

    func test_helloPingHelpQuit_replyAsSpecified() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let c = try daemon.connect()
        let hello = try c.request("HELLO")
        XCTAssertNotNil(hello.range(of: #"^HELLO navsync 1 \S+$"#, options: .regularExpression), hello)
        XCTAssertEqual(try c.request("HELLO 1"), hello)
        XCTAssertEqual(try c.request("PING  some text \t"), "PONG some text")
        let help = try c.requestList("HELP")
        XCTAssertGreaterThan(help.count, 2)
        XCTAssertEqual(help.last, "END")
        XCTAssertEqual(try c.request("QUIT"), "BYE")
        XCTAssertEqual(try c.readUntilClosed(), [])
    }

    func test_stats_reportsEveryRequiredKey() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let watcher = try daemon.connect()
        let c = try daemon.connect()
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try c.request("SELECT green"), "OK 1")
        XCTAssertEqual(try c.request("PUSH blue"), "OK 2")
        XCTAssertEqual(try watcher.readLines(2).count, 2)
        let lines = try c.requestList("STATS")
        XCTAssertEqual(lines.last, "END")
        var stats: [String: String] = [:]
        for line in lines.dropLast() {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            XCTAssertEqual(parts.count, 3, line)
            XCTAssertEqual(parts.first, "STAT", line)
            if parts.count == 3 { stats[parts[1]] = parts[2] }
        }
        for key in ["version", "uptime_s", "connections", "watchers", "watchers_total", "rooms", "rev", "events_out",
                    "resyncs"] {
            XCTAssertNotNil(stats[key], "STATS lacks \(key)")
        }
        XCTAssertEqual(stats["connections"], "2")
        XCTAssertEqual(stats["watchers"], "1")
        XCTAssertEqual(stats["watchers_total"], "1")
        XCTAssertEqual(stats["rooms"], "1")
        XCTAssertEqual(stats["rev"], "2")
        XCTAssertEqual(stats["events_out"], "2")
        XCTAssertEqual(stats["resyncs"], "0")
        XCTAssertNotNil(stats["uptime_s"].flatMap { UInt64($0) })
        // Per-room figures follow the connection.
        XCTAssertEqual(try c.request("JOIN elsewhere"), "STATE 0 /red")
        let elsewhere = try c.requestList("STATS")
        XCTAssertTrue(elsewhere.contains("STAT watchers 0"), "\(elsewhere)")
        XCTAssertTrue(elsewhere.contains("STAT rev 0"), "\(elsewhere)")
        XCTAssertTrue(elsewhere.contains("STAT watchers_total 1"), "\(elsewhere)")
        XCTAssertTrue(elsewhere.contains("STAT rooms 1"), "reading a room creates nothing: \(elsewhere)")
    }
}
