import XCTest

/// Every error code a client can provoke over the wire, each with the code the
/// contract names, in the `ERR <code> <message>` shape.
final class DaemonErrorCodeTests: XCTestCase {
    /// red → green → blue → red as built in, plus `end`, which has no next.
    static let catalogWithDeadEnd = """
        {"initial": "red", "screens": [
          {"name": "red", "title": "Red", "color": "red", "next": "green"},
          {"name": "green", "title": "Green", "color": "green", "next": "blue"},
          {"name": "blue", "title": "Blue", "color": "blue", "next": "red", "data": "optional"},
          {"name": "form", "title": "Form", "color": "white", "next": "red", "data": "required"},
          {"name": "end", "title": "The End", "color": "black"}
        ]}
        """

    private var seen: Set<String> = []

    /// Sends `line` and checks the reply is `ERR <code> <message>`.
    private func expectError(_ client: LineClient, _ line: String, _ code: String,
                             file: StaticString = #filePath, line number: UInt = #line) throws {
        let reply = try client.request(line)
        XCTAssertTrue(reply.hasPrefix("ERR \(code) "), "\(line) → \(reply), wanted \(code)", file: file, line: number)
        XCTAssertGreaterThan(reply.count, "ERR \(code) ".count, "\(line): no message", file: file, line: number)
        seen.insert(code)
    }

    func test_errors_everyCodeReachableFromTheWire_hasItsCode() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let catalog = try dir.write("screens.json", Self.catalogWithDeadEnd)
        let token = try dir.write("token", "letmein\n")
        let daemon = try DaemonProcess(arguments: [
            "--screens", catalog, "--token-file", token, "--max-depth", "3", "--max-rooms", "2",
            "--max-clients", "2", "--max-line", "100",
        ], state: "none")
        defer { daemon.stop() }
        let c = try daemon.connect()

        try expectError(c, "GET", "auth-required")
        try expectError(c, "WATCH", "auth-required")
        try expectError(c, "SELECT green", "auth-required")
        XCTAssertEqual(try c.request("PING before auth"), "PONG before auth")
        XCTAssertTrue(try c.request("HELLO 1").hasPrefix("HELLO navsync 1 "))
        try expectError(c, "AUTH wrong", "auth-failed")
        XCTAssertEqual(try c.request("AUTH letmein"), "OK 0", "two failures do not lock out the right token")
        // A later wrong token is refused, but the connection stays authenticated.
        try expectError(c, "AUTH wrong-again", "auth-failed")
        XCTAssertEqual(try c.request("GET"), "STATE 0 /red")

        try expectError(c, "FROB", "unknown-command")
        try expectError(c, "IF 0 FROB", "unknown-command")

        try expectError(c, "GET now", "bad-args")
        try expectError(c, "SELECT", "bad-args")
        try expectError(c, "SELECT red some data", "bad-args")  // red takes no data
        try expectError(c, "SELECT form", "bad-args")  // form requires data
        try expectError(c, "OPEN", "bad-args")
        try expectError(c, "OPEN /red /green", "bad-args")
        try expectError(c, "POP now", "bad-args")
        try expectError(c, "JOIN", "bad-args")
        try expectError(c, "JOIN bad/room", "bad-args")
        try expectError(c, "JOIN " + String(repeating: "r", count: 65), "bad-args")
        try expectError(c, "HELLO 2", "bad-args")
        try expectError(c, "IF x SELECT green", "bad-args")
        try expectError(c, "IF -1 SELECT green", "bad-args")
        try expectError(c, "IF 0 GET", "bad-args")
        try expectError(c, "IF 0 IF 0 SELECT green", "bad-args")
        try expectError(c, "NEXT hello", "bad-args")  // green, the next of red, takes no data

        try expectError(c, "SELECT purple", "unknown-screen")
        try expectError(c, "PUSH Red", "unknown-screen")
        try expectError(c, "OPEN /red/purple", "unknown-screen")

        for route in ["red", "/", "/red//green", "/red/", "/blue:%zz", "/blue:%4", "/blue:%C3", "/r$d", "/red:x:%"] {
            try expectError(c, "OPEN \(route)", "bad-route")
        }

        try expectError(c, "POP", "at-root")
        XCTAssertEqual(try c.request("SELECT end"), "OK 1")
        try expectError(c, "NEXT", "no-next")
        try expectError(c, "IF 0 SELECT red", "conflict")
        XCTAssertEqual(try c.request("IF 0 SELECT red"), "ERR conflict current=1")

        // Depth 3: an OPEN deeper is judged from the line, a PUSH past it from the state.
        try expectError(c, "OPEN /red/green/blue/red", "limit")
        XCTAssertEqual(try c.request("OPEN /red/green/blue"), "OK 2")
        try expectError(c, "PUSH red", "limit")
        // Rooms: main holds state; one more may be created, not two.
        XCTAssertEqual(try c.request("JOIN second"), "STATE 0 /red")
        XCTAssertEqual(try c.request("SELECT green"), "OK 1")
        XCTAssertEqual(try c.request("JOIN third"), "STATE 0 /red", "joining creates nothing")
        try expectError(c, "SELECT green", "limit")
        XCTAssertEqual(try c.request("GET"), "STATE 0 /red")

        try expectError(c, "PING " + String(repeating: "z", count: 200), "line-too-long")

        c.sendBytes(Array("PING ".utf8) + [0xC3, 0x28] + [10])
        let encodingReply = try c.readLine()
        XCTAssertTrue(encodingReply.hasPrefix("ERR bad-encoding "), encodingReply)
        seen.insert("bad-encoding")

        // A second connection fits; the third is over --max-clients 2.
        let second = try daemon.connect()
        XCTAssertEqual(try second.request("PING"), "PONG")
        let third = try daemon.connect()
        let busy = try third.readUntilClosed()
        XCTAssertEqual(busy.count, 1, "\(busy)")
        XCTAssertTrue(busy.first?.hasPrefix("ERR busy ") ?? false, "\(busy)")
        if busy.first?.hasPrefix("ERR busy ") == true { seen.insert("busy") }

        // The third wrong AUTH on one connection closes it.
        second.send("AUTH a\nAUTH b\nAUTH c\n")
        let closing = try second.readUntilClosed()
        XCTAssertEqual(closing.count, 3, "\(closing)")
        XCTAssertTrue(closing.allSatisfy { $0.hasPrefix("ERR auth-failed ") }, "\(closing)")

        // Errors never closed the first connection.
        XCTAssertEqual(try c.request("PING still open"), "PONG still open")
        third.close()
        second.close()
        c.close()

        let reachable: Set<String> = [
            "unknown-command", "bad-args", "unknown-screen", "bad-route", "at-root", "no-next", "conflict",
            "line-too-long", "bad-encoding", "auth-required", "auth-failed", "limit", "busy",
        ]
        XCTAssertEqual(seen, reachable)
    }

    func test_auth_onDaemonWithoutToken_isBadArgs() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        try expectError(client, "AUTH anything", "bad-args")
        XCTAssertEqual(try client.request("GET"), "STATE 0 /red")
    }

    func test_checkOrder_parseBeforeConflict_conflictBeforeState() throws {
        let daemon = try DaemonProcess(arguments: ["--max-depth", "2"], state: "none")
        defer { daemon.stop() }
        let c = try daemon.connect()
        try expectError(c, "IF 7 SELECT purple", "unknown-screen")
        try expectError(c, "IF 7 SELECT red data", "bad-args")
        try expectError(c, "IF 7 OPEN /red/", "bad-route")
        try expectError(c, "IF 7 OPEN /red/green/blue", "limit")
        XCTAssertEqual(try c.request("IF 7 POP"), "ERR conflict current=0", "conflict before at-root")
        XCTAssertEqual(try c.request("IF 7 NEXT data"), "ERR conflict current=0", "conflict before NEXT's data")
        try expectError(c, "IF 0 POP", "at-root")
        try expectError(c, "IF 0 NEXT data", "bad-args")
        XCTAssertEqual(try c.request("IF 0 PUSH green"), "OK 1")
        try expectError(c, "IF 1 PUSH blue", "limit")
        XCTAssertEqual(try c.request("GET"), "STATE 1 /red/green")
    }
}
