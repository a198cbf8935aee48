import ChildProcessHarness
import Foundation
import XCTest

/// `--screens FILE`: the JSON catalog, its errors, and reloading it on SIGHUP.
final class DaemonCatalogTests: XCTestCase {
    /// The A → B → C flow of the contract, where viewB requires data.
    static let abcCatalog = """
        {
          "initial": "viewA",
          "screens": [
            {"name": "viewA", "title": "View A", "color": "cyan",
             "message": "Start here", "next": "viewB", "data": "none"},
            {"name": "viewB", "title": "View B", "color": "magenta",
             "message": "Got data from A", "next": "viewC", "data": "required"},
            {"name": "viewC", "title": "View C", "color": "yellow",
             "message": "Last stop", "next": "viewA"}
          ]
        }
        """

    static let abcScreens = [
        "SCREEN viewA cyan viewB none View A",
        "SCREEN viewB magenta viewC required View B",
        "SCREEN viewC yellow viewA none View C",
        "END",
    ]

    func test_screens_abcCatalog_listedInOrder_defaultCatalogToo() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let catalog = try dir.write("abc.json", Self.abcCatalog)
        let daemon = try DaemonProcess(arguments: ["--screens", catalog], state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        XCTAssertEqual(try client.requestList("SCREENS"), Self.abcScreens)
        XCTAssertEqual(try client.request("GET"), "STATE 0 /viewA")

        let plain = try DaemonProcess(state: "none")
        defer { plain.stop() }
        let other = try plain.connect()
        XCTAssertEqual(try other.requestList("SCREENS"), [
            "SCREEN red red green none Red",
            "SCREEN green green blue none Green",
            "SCREEN blue blue red optional Blue",
            "END",
        ])
    }

    func test_screens_abcCycle_nextRequiresDataOnViewB() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let daemon = try DaemonProcess(arguments: ["--screens", try dir.write("abc.json", Self.abcCatalog)], state: "none")
        defer { daemon.stop() }
        let c = try daemon.connect()
        let watcher = try daemon.connect()
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /viewA")
        XCTAssertTrue(try c.request("NEXT").hasPrefix("ERR bad-args "), "viewB requires data")
        XCTAssertTrue(try c.request("NEXT   ").hasPrefix("ERR bad-args "), "empty data is no data")
        XCTAssertEqual(try c.request("NEXT some Data from A"), "OK 1")
        XCTAssertEqual(try watcher.readLine(), "EVENT 1 next /viewB:some%20Data%20from%20A")
        XCTAssertTrue(try c.request("NEXT more").hasPrefix("ERR bad-args "), "viewC takes no data")
        XCTAssertEqual(try c.request("NEXT"), "OK 2")
        XCTAssertEqual(try watcher.readLine(), "EVENT 2 next /viewC")
        XCTAssertEqual(try c.request("NEXT"), "OK 3")
        XCTAssertEqual(try watcher.readLine(), "EVENT 3 next /viewA")
        XCTAssertTrue(try c.request("SELECT viewB").hasPrefix("ERR bad-args "))
        XCTAssertTrue(try c.request("PUSH viewC data").hasPrefix("ERR bad-args "))
        XCTAssertTrue(try c.request("SELECT red").hasPrefix("ERR unknown-screen "), "the built-in screens are gone")
        XCTAssertEqual(try c.request("PUSH viewB again"), "OK 4")
        XCTAssertEqual(try c.request("GET"), "STATE 4 /viewA/viewB:again")
    }

    func test_open_deepLinkWithPercentEncodedData() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let daemon = try DaemonProcess(arguments: ["--screens", try dir.write("abc.json", Self.abcCatalog)], state: "none")
        defer { daemon.stop() }
        let c = try daemon.connect()
        XCTAssertEqual(try c.request("OPEN /viewA/viewB:some%20Data%20from%20A"), "OK 1")
        XCTAssertEqual(try c.request("GET"), "STATE 1 /viewA/viewB:some%20Data%20from%20A")
        XCTAssertEqual(try c.request("OPEN /viewA/viewB:caf%c3%a9%2fbar+baz~%7E/viewC"), "OK 2")
        XCTAssertEqual(try c.request("GET"), "STATE 2 /viewA/viewB:caf%C3%A9%2Fbar%2Bbaz~~/viewC",
                       "lowercase hex accepted, uppercase written, + kept as a plus")
        XCTAssertEqual(try c.request("OPEN /viewA/viewB:caf%C3%A9%2Fbar%2Bbaz~~/viewC"), "OK 2", "the same stack: no-op")
        XCTAssertTrue(try c.request("OPEN /viewA/viewB").hasPrefix("ERR bad-args "), "viewB requires data")
        XCTAssertTrue(try c.request("OPEN /viewA/viewB:").hasPrefix("ERR bad-args "), "empty data is no data")
        XCTAssertTrue(try c.request("OPEN /viewA:x").hasPrefix("ERR bad-args "), "viewA takes no data")
        XCTAssertTrue(try c.request("OPEN /viewB:%ZZ").hasPrefix("ERR bad-route "))
        XCTAssertTrue(try c.request("OPEN /viewB:%FF").hasPrefix("ERR bad-route "), "not UTF-8 once decoded")
        XCTAssertTrue(try c.request("OPEN /viewD").hasPrefix("ERR unknown-screen "))
        XCTAssertEqual(try c.request("GET"), "STATE 2 /viewA/viewB:caf%C3%A9%2Fbar%2Bbaz~~/viewC")
    }

    func test_screens_badCatalog_exit1NamingFileAndProblem() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let screen = #"{"name": "a", "title": "A", "color": "red"}"#
        let cases: [(name: String, json: String, mentions: String)] = [
            ("not-json", "{ nope", "JSON"),
            ("unknown-key", #"{"initial": "a", "screens": [{"name": "a", "title": "A", "colour": "red"}]}"#, "colour"),
            ("unknown-top-key", #"{"initial": "a", "screens": [\#(screen)], "extra": 1}"#, "extra"),
            ("no-initial", #"{"screens": [\#(screen)]}"#, "initial"),
            ("no-screens", #"{"initial": "a"}"#, "screens"),
            ("initial-unknown", #"{"initial": "z", "screens": [\#(screen)]}"#, "initial"),
            ("initial-needs-data",
             #"{"initial": "a", "screens": [{"name": "a", "title": "A", "color": "red", "data": "required"}]}"#, "initial"),
            ("next-unknown", #"{"initial": "a", "screens": [{"name": "a", "title": "A", "color": "red", "next": "q"}]}"#, "next"),
            ("duplicate", #"{"initial": "a", "screens": [\#(screen), \#(screen)]}"#, "name"),
            ("bad-color", #"{"initial": "a", "screens": [{"name": "a", "title": "A", "color": "orange"}]}"#, "color"),
            ("bad-data-rule", #"{"initial": "a", "screens": [{"name": "a", "title": "A", "color": "red", "data": "maybe"}]}"#, "data"),
            ("bad-name", #"{"initial": "a b", "screens": [{"name": "a b", "title": "A", "color": "red"}]}"#, "name"),
            ("no-title", #"{"initial": "a", "screens": [{"name": "a", "color": "red"}]}"#, "title"),
        ]
        for (name, json, mentions) in cases {
            let path = try dir.write("\(name).json", json)
            let result = try runProcess(Binaries.daemon, ["--listen", "127.0.0.1:0", "--state", "none", "--screens", path])
            XCTAssertEqual(result.status, 1, "\(name): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(path), "\(name) does not name the file: \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(mentions), "\(name) does not say what: \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("listening on"), name)
        }
        let missing = dir.file("absent.json")
        let result = try runProcess(Binaries.daemon, ["--listen", "127.0.0.1:0", "--state", "none", "--screens", missing])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains(missing), result.stderr)
    }

    func test_screens_optionalFieldsMayBeLeftOut() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = try dir.write("minimal.json", #"{"initial": "only", "screens": [{"name": "only", "title": "Only One", "color": "white"}]}"#)
        let daemon = try DaemonProcess(arguments: ["--screens", path], state: "none")
        defer { daemon.stop() }
        let c = try daemon.connect()
        XCTAssertEqual(try c.requestList("SCREENS"), ["SCREEN only white - none Only One", "END"])
        XCTAssertTrue(try c.request("NEXT").hasPrefix("ERR no-next "))
        XCTAssertTrue(try c.request("SELECT only data").hasPrefix("ERR bad-args "))
    }

    func test_sighup_withoutScreensFile_keepsRunningWithBuiltInCatalog() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("SELECT green"), "OK 1")
        let logBefore = daemon.log.count
        kill(daemon.pid, SIGHUP)
        XCTAssertTrue(waitUntil { daemon.log.count > logBefore || !daemon.process.isRunning }, "SIGHUP left no trace")
        XCTAssertTrue(daemon.process.isRunning, "SIGHUP must not stop the daemon")
        XCTAssertEqual(try client.request("GET"), "STATE 1 /green")
        XCTAssertEqual(try client.requestList("SCREENS").count, 4)
    }

    func test_sighup_reloadsCatalog_badFileKeepsTheOld_heldStacksStay() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = try dir.write("screens.json", Self.abcCatalog)
        let daemon = try DaemonProcess(arguments: ["--screens", path], state: "none")
        defer { daemon.stop() }
        let c = try daemon.connect()
        XCTAssertEqual(try c.request("OPEN /viewA/viewC"), "OK 1")

        // viewC is dropped, viewD added.
        try dir.write("screens.json", """
            {"initial": "viewA", "screens": [
              {"name": "viewA", "title": "View A", "color": "cyan", "next": "viewD"},
              {"name": "viewD", "title": "View D", "color": "green", "next": "viewA", "data": "optional"}
            ]}
            """)
        kill(daemon.pid, SIGHUP)
        let reloaded = ["SCREEN viewA cyan viewD none View A", "SCREEN viewD green viewA optional View D", "END"]
        XCTAssertTrue(try waitUntil { try c.requestList("SCREENS") == reloaded }, daemon.log)
        XCTAssertTrue(daemon.process.isRunning)
        XCTAssertEqual(try c.request("GET"), "STATE 1 /viewA/viewC", "a held stack keeps a dropped screen")
        XCTAssertTrue(try c.request("PUSH viewC").hasPrefix("ERR unknown-screen "))
        XCTAssertTrue(try c.request("NEXT").hasPrefix("ERR no-next "), "NEXT from a dropped screen")
        XCTAssertEqual(try c.request("POP"), "OK 2")
        XCTAssertEqual(try c.request("NEXT hi"), "OK 3")
        XCTAssertEqual(try c.request("GET"), "STATE 3 /viewD:hi")

        // A broken file is logged and the catalog stays as it was.
        try dir.write("screens.json", #"{"initial": "viewA", "screens": [{"name": "viewA", "colour": "red"}]}"#)
        let logBefore = daemon.log.count
        kill(daemon.pid, SIGHUP)
        XCTAssertTrue(waitUntil { daemon.log.dropFirst(logBefore).contains(path) }, "the failed reload is not logged")
        XCTAssertTrue(daemon.process.isRunning)
        XCTAssertEqual(try c.requestList("SCREENS"), reloaded)
        XCTAssertEqual(try c.request("NEXT"), "OK 4")
        c.close()
    }
}
