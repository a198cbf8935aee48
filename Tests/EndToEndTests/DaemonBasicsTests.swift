import XCTest

final class DaemonBasicsTests: XCTestCase {
    func test_daemon_contractExampleSession_matchesLineForLine() throws {
        let daemon = try DaemonProcess()
        defer { daemon.stop() }
        let a = try daemon.connect()
        let b = try daemon.connect()
        XCTAssertEqual(try a.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try b.request("SELECT green"), "OK 1")
        XCTAssertEqual(try a.readLine(), "EVENT 1 select /green")
        XCTAssertEqual(try b.request("PUSH blue hello world"), "OK 2")
        XCTAssertEqual(try a.readLine(), "EVENT 2 push /green/blue:hello%20world")
        a.send("POP\n")
        XCTAssertEqual(try a.readLines(2), ["OK 3", "EVENT 3 pop /green"])
        XCTAssertEqual(try b.request("IF 2 SELECT red"), "ERR conflict current=3")
        XCTAssertEqual(try b.request("GET"), "STATE 3 /green")
    }
}
