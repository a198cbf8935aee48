import Foundation
import Glibc
import NavSyncKit
@testable import navsync_abc
import XCTest

/// NavSyncKit's life against the built daemon: refused starts, a daemon
/// killed and restarted, stop(), and a flood of mutations nobody awaits.
@MainActor
final class SharedNavigationLifeTests: XCTestCase {
    func test_start_noDaemon_throwsDisconnectedWithoutRetrying() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let navigation = SharedNavigation<NavEntry>(connect: "unix:\(directory.file("nobody.sock")),unix:\(directory.file("nor-here.sock"))")
        do {
            try await navigation.start()
            XCTFail("start with no daemon must throw")
        } catch {
            XCTAssertEqual(error as? NavSyncError, .disconnected)
        }
        guard case .failed(let reason) = navigation.connection else { return XCTFail("\(navigation.connection)") }
        XCTAssertTrue(reason.contains("nobody.sock"), reason)
        await navigation.stop()
    }

    func test_start_addressList_triesEachInTurn() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let navigation = SharedNavigation<NavEntry>(connect: "unix:\(directory.file("gone.sock")),127.0.0.1:\(daemon.port)")
        try await navigation.start()
        XCTAssertEqual(navigation.stack, [NavEntry("red")])
        await navigation.stop()
    }

    func test_start_wrongToken_throwsTheDaemonsRefusal() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tokenFile = try directory.write("token", "s3cret\n")
        let daemon = try DaemonProcess(arguments: ["--token-file", tokenFile], state: "none")
        defer { daemon.stop() }
        let wrong = SharedNavigation<NavEntry>(connect: "127.0.0.1:\(daemon.port)", token: "guess")
        do {
            try await wrong.start()
            XCTFail("a wrong token must be refused")
        } catch let NavSyncError.server(code, _) {
            XCTAssertEqual(code, "auth-failed")
        }
        let right = SharedNavigation<NavEntry>(connect: "127.0.0.1:\(daemon.port)", token: "s3cret")
        try await right.start()
        try await right.push(NavEntry("green"))
        XCTAssertEqual(right.stack, [NavEntry("red"), NavEntry("green")])
        await right.stop()
        await wrong.stop()
    }

    func test_start_roomShowsAScreenTheTypeRefuses_failsWithUnknownScreen() async throws {
        let daemon = try DaemonProcess(state: "none")  // red, green, blue: none of them is an ABCScreen
        defer { daemon.stop() }
        let navigation = SharedNavigation<ABCScreen>(connect: "127.0.0.1:\(daemon.port)")
        do {
            try await navigation.start()
            XCTFail("red is not an ABCScreen")
        } catch {
            XCTAssertEqual(error as? NavSyncError, .unknownScreen("red"))
        }
        guard case .failed = navigation.connection else { return XCTFail("\(navigation.connection)") }
        do {
            try await navigation.select(.viewA)
            XCTFail("a failed object takes no mutation")
        } catch {
            XCTAssertEqual(error as? NavSyncError, .notRunning)
        }
    }

    func test_stop_finishesStreamsRefusesMutationsAndEndsTheThread() async throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let before = threadIDs()
        let navigation = SharedNavigation<NavEntry>(connect: "127.0.0.1:\(daemon.port)")
        try await navigation.start()
        // The loop thread names itself as it starts; Foundation's setter on
        // Linux was seen to reach /proc a moment after start() returned. An
        // earlier test's object may end its own thread meanwhile (seen under
        // TSan), so the new thread is the one id that was not there before.
        var ours: Set<String> = []
        await eventually("one thread per object") {
            ours = threadIDs().subtracting(before)
            return ours.count == 1
        }
        let log = ChangeLog(navigation.changes)
        let watcher = try daemon.connect()
        defer { watcher.close() }
        _ = try watcher.request("WATCH")
        await navigation.stop()
        XCTAssertEqual(navigation.connection, .stopped)
        await eventually("the stream finishes") { log.finished }
        await eventually("the loop thread ends") { threadIDs().isDisjoint(with: ours) }
        do {
            try await navigation.push(NavEntry("green"))
            XCTFail("push after stop")
        } catch {
            XCTAssertEqual(error as? NavSyncError, .notRunning)
        }
        do {
            try await navigation.start()
            XCTFail("start after stop")
        } catch {
            XCTAssertEqual(error as? NavSyncError, .notRunning)
        }
        // The daemon hears the QUIT and the close on its own schedule: ask until it has.
        var stats: [String] = []
        await eventually("the daemon to drop the object's connection") {
            stats = (try? watcher.requestList("STATS")) ?? []
            return stats.contains("STAT connections 1")
        }
        XCTAssertTrue(stats.contains("STAT watchers 1"), "only the test's own watch is left: \(stats)")
        await navigation.stop()
    }

    func test_unawaitedMutations_thousandsAllAnswered() async throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let navigation = SharedNavigation<NavEntry>(connect: "127.0.0.1:\(daemon.port)")
        try await navigation.start()
        let count = 3000
        var tasks: [Task<UInt64, Error>] = []
        for index in 0..<count {
            let screen = NavEntry("blue", data: "\(index)")
            tasks.append(Task { @MainActor in try await navigation.select(screen) })
        }
        var revisions: [UInt64] = []
        for task in tasks { revisions.append(try await task.value) }
        XCTAssertEqual(Set(revisions).count, count, "every select made its own revision")
        XCTAssertEqual(navigation.revision, UInt64(count))
        XCTAssertEqual(navigation.stack.count, 1)
        await navigation.stop()
    }

    func test_daemonKilledAndRestarted_resumesGapFreeFromTheAcknowledgedState() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let socket = directory.file("navsync.sock")
        let statePath = directory.file("state.json")
        var daemon = try DaemonProcess(arguments: ["--unix", socket], state: statePath)
        defer { daemon.stop() }
        let navigation = SharedNavigation<NavEntry>(connect: "unix:\(socket)", room: "restart")
        try await navigation.start()
        let log = ChangeLog(navigation.changes)
        try await navigation.select(NavEntry("green"))
        let acknowledged = try await navigation.push(NavEntry("blue", data: "before the crash"))

        daemon.signal(SIGKILL)
        await eventually("the object notices the loss") { navigation.connection == .reconnecting }
        XCTAssertEqual(navigation.stack.last, NavEntry("blue", data: "before the crash"), "the last state stays")
        do {
            try await navigation.pop()
            XCTFail("a mutation while reconnecting throws at once")
        } catch {
            XCTAssertEqual(error as? NavSyncError, .disconnected)
        }

        daemon = try DaemonProcess(arguments: ["--unix", socket], state: statePath)
        // A change made while the object was away: it must see it after the reconnect.
        let writer = try LineClient(unixPath: socket)
        defer { writer.close() }
        _ = try writer.request("JOIN restart")
        XCTAssertEqual(try writer.request("PUSH red"), "OK \(acknowledged + 1)")
        await eventually("reconnected") { navigation.connection == .connected }
        await eventually("the change made while away") { navigation.revision == acknowledged + 1 }
        XCTAssertEqual(navigation.stack, [NavEntry("green"), NavEntry("blue", data: "before the crash"), NavEntry("red")])

        try await navigation.pop()
        await eventually("every change logged") { log.changes.last?.revision == acknowledged + 2 }
        // Resumed with WATCH <rev>: the daemon restarted at the acknowledged
        // revision, so it continues, and the change made meanwhile arrives as
        // the push it was (replayed or live), never as a whole-state resync.
        XCTAssertEqual(log.changes.map(\.op), [.select, .push, .push, .pop], "\(log.changes)")
        XCTAssertEqual(log.changes.map(\.revision), Array(acknowledged - 1 ... acknowledged + 2))
        await navigation.stop()
    }
}
