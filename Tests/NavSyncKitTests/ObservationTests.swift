import NavSyncClient
import NavSyncCore
@testable import NavSyncKit
@testable import navsync_abc
import Observation
import XCTest

/// The path from an engine's snapshot to the observable properties, without a daemon.
@MainActor
final class ObservationTests: XCTestCase {
    private func state(_ route: String, _ revision: UInt64) -> RoomState {
        RoomState(try! Route.decode(route).get(), revision: revision)
    }

    /// Arms one observation of everything a view reads; returns a counter of how often it fired.
    private func observe(_ navigation: SharedNavigation<ABCScreen>, into fired: Counter) {
        withObservationTracking {
            _ = navigation.stack
            _ = navigation.sheets
            _ = navigation.revision
        } onChange: {
            fired.increment()
        }
    }

    final class Counter: @unchecked Sendable {  // touched on the main actor only; onChange is not marked so
        var value = 0
        func increment() { value += 1 }
    }

    func test_receive_firesObservationOncePerRevision() {
        let navigation = SharedNavigation<ABCScreen>()
        navigation.beginWithoutEngineForTesting()
        navigation.receive([.link(.handshaking), .snapshot(state("/viewA", 0), .connected), .link(.live)], from: 0)
        XCTAssertEqual(navigation.connection, .connected)
        XCTAssertEqual(navigation.stack, [.viewA])

        let routes = ["/viewB:one", "/viewB:one/viewC", "/viewB:one/viewC#viewA", "/viewB:one#viewA#viewB:two",
                      "/viewB:one", "/viewC", "/viewA"]
        for (offset, route) in routes.enumerated() {
            let fired = Counter()
            observe(navigation, into: fired)
            let revision = UInt64(offset + 1)
            navigation.receive([.event(state(route, revision), op: "push")], from: 0)
            XCTAssertEqual(fired.value, 1, "revision \(revision)")
            XCTAssertEqual(navigation.revision, revision)
        }
        XCTAssertEqual(navigation.stack, [.viewA])
    }

    func test_receive_resyncToTheSameState_changesNothingObservable() {
        let navigation = SharedNavigation<ABCScreen>()
        navigation.beginWithoutEngineForTesting()
        navigation.receive([.snapshot(state("/viewA/viewC", 4), .connected)], from: 0)
        let fired = Counter()
        observe(navigation, into: fired)
        navigation.receive([.snapshot(state("/viewA/viewC", 4), .resync)], from: 0)
        XCTAssertEqual(fired.value, 0)
    }

    func test_receive_connectionStateFollowsTheLink() {
        let navigation = SharedNavigation<ABCScreen>()
        navigation.beginWithoutEngineForTesting()
        navigation.receive([.snapshot(state("/viewA", 0), .connected), .link(.live)], from: 0)
        navigation.receive([.link(.waiting(retryAt: 10, failures: 1, reason: "gone"))], from: 0)
        XCTAssertEqual(navigation.connection, .reconnecting)
        XCTAssertEqual(navigation.stack, [.viewA], "the last state stays while reconnecting")
        navigation.receive([.link(.connecting(failures: 1)), .link(.handshaking)], from: 0)
        XCTAssertEqual(navigation.connection, .reconnecting)
        navigation.receive([.snapshot(state("/viewC", 9), .connected), .link(.live)], from: 0)
        XCTAssertEqual(navigation.connection, .connected)
        XCTAssertEqual(navigation.stack, [.viewC])
    }

    func test_receive_refusedScreen_failsAndKeepsTheLastGoodState() async {
        let navigation = SharedNavigation<ABCScreen>()
        navigation.beginWithoutEngineForTesting()
        navigation.receive([.snapshot(state("/viewA", 0), .connected), .link(.live)], from: 0)
        let stream = navigation.changes
        navigation.receive([.event(state("/viewA/red", 1), op: "push")], from: 0)
        guard case .failed(let reason) = navigation.connection else {
            return XCTFail("expected .failed, got \(navigation.connection)")
        }
        XCTAssertTrue(reason.contains("red"), reason)
        XCTAssertEqual(navigation.stack, [.viewA])
        XCTAssertEqual(navigation.revision, 0)
        var seen: [NavChange<ABCScreen>] = []
        for await change in stream { seen.append(change) }
        XCTAssertEqual(seen, [], "the stream finishes without the refused change")
        do {
            try await navigation.push(.viewC)
            XCTFail("a failed object takes no mutation")
        } catch {
            XCTAssertEqual(error as? NavSyncError, .notRunning)
        }
    }

    func test_mutations_beforeStart_throwNotRunning() async {
        let navigation = SharedNavigation<NavEntry>()
        do {
            try await navigation.pop()
            XCTFail("pop before start")
        } catch {
            XCTAssertEqual(error as? NavSyncError, .notRunning)
        }
        XCTAssertEqual(navigation.connection, .idle)
    }

    func test_changes_unknownOpIsReportedAsState() async {
        let navigation = SharedNavigation<NavEntry>()
        navigation.beginWithoutEngineForTesting()
        navigation.receive([.snapshot(state("/red", 0), .connected)], from: 0)
        let stream = navigation.changes
        navigation.receive([.event(state("/green", 1), op: "teleport"), .event(state("/blue", 2), op: "next")], from: 0)
        await navigation.stop()
        var ops: [NavOp] = []
        for await change in stream { ops.append(change.op) }
        XCTAssertEqual(ops, [.state, .next])
    }
}
