import Foundation
import NavSyncKit
import XCTest

/// NavSyncKit against peers that are not (or not only) a well-behaved daemon.
@MainActor
final class SharedNavigationBadPeerTests: XCTestCase {
    func test_start_peerThatDoesNotSpeakTheProtocol_failsInsteadOfWaiting() async throws {
        let peer = try ScriptedPeer { _ in "HTTP/1.1 400 Bad Request" }
        defer { peer.stop() }
        let navigation = SharedNavigation<NavEntry>(connect: "127.0.0.1:\(peer.port)")
        do {
            try await navigation.start()
            XCTFail("start against a peer that answers nonsense")
        } catch let NavSyncError.server(code, _) {
            XCTAssertEqual(code, "bad-reply")
        }
        guard case .failed = navigation.connection else { return XCTFail("\(navigation.connection)") }
    }

    func test_mutation_unreadableReply_throwsBadReply_andTheObjectStaysUsable() async throws {
        let peer = try ScriptedPeer { line in
            switch line {
            case "WATCH": return "STATE 4 /red"
            case "PUSH green": return "OK banana"
            case "POP": return "OK 5"
            case "PING": return "PONG"
            default: return "ERR unknown-command not in this script"
            }
        }
        defer { peer.stop() }
        let navigation = SharedNavigation<NavEntry>(connect: "127.0.0.1:\(peer.port)")
        try await navigation.start()
        XCTAssertEqual(navigation.revision, 4)
        do {
            try await navigation.push(NavEntry("green"))
            XCTFail("OK banana is no revision")
        } catch {
            XCTAssertEqual(error as? NavSyncError, .server(code: "bad-reply", message: "OK banana"))
        }
        do {
            try await navigation.root()
            XCTFail("the script refuses ROOT")
        } catch {
            XCTAssertEqual(error as? NavSyncError, .server(code: "unknown-command", message: "not in this script"))
        }
        XCTAssertEqual(navigation.connection, .connected)
        XCTAssertEqual(navigation.stack, [NavEntry("red")], "nothing changed without an event")
        await navigation.stop()
    }

    func test_start_daemonAtItsClientLimit_throwsBusy() async throws {
        let daemon = try DaemonProcess(arguments: ["--max-clients", "1"], state: "none")
        defer { daemon.stop() }
        let occupant = try daemon.connect()
        defer { occupant.close() }
        XCTAssertEqual(try occupant.request("PING"), "PONG")
        let navigation = SharedNavigation<NavEntry>(connect: "127.0.0.1:\(daemon.port)")
        do {
            try await navigation.start()
            XCTFail("a full daemon must refuse")
        } catch let NavSyncError.server(code, _) {
            XCTAssertEqual(code, "busy")
        }
        guard case .failed = navigation.connection else { return XCTFail("\(navigation.connection)") }
    }
}
