import NavSyncClient
import NavSyncCore
@testable import NavSyncKit
@testable import navsync_abc
import Observation
import XCTest

/// The path from the engine's member lists to `members` and `me`, without a daemon.
@MainActor
final class PresenceObservationTests: XCTestCase {
    private let red = RoomState(try! Route.decode("/viewA").get(), revision: 0)

    final class Counter: @unchecked Sendable {  // touched on the main actor only; onChange is not marked so
        var value = 0
        func increment() { value += 1 }
    }

    private func observeMembers(_ navigation: SharedNavigation<ABCScreen>, into fired: Counter) {
        withObservationTracking { _ = navigation.members } onChange: { fired.increment() }
    }

    func test_members_shownWithTheFirstState_thenChangeOnArrivalAndDeparture() {
        let navigation = SharedNavigation<ABCScreen>()
        navigation.beginWithoutEngineForTesting()
        let ada = Member(id: "1", name: "ada", role: .control)
        let bo = Member(id: "2", name: "bo", role: .view, at: "/viewB:x")
        navigation.receive([.identity(Identity(id: "1", name: "ada", role: "control", rooms: "*")), .members([ada])], from: 0)
        XCTAssertEqual(navigation.members, [], "empty until start() returns")
        navigation.receive([.snapshot(red, .connected), .link(.live)], from: 0)
        XCTAssertEqual(navigation.members.map(\.name), ["ada"])
        XCTAssertEqual(navigation.me?.id, "1")

        let arrived = Counter()
        observeMembers(navigation, into: arrived)
        navigation.receive([.members([ada, bo])], from: 0)
        XCTAssertEqual(arrived.value, 1)
        XCTAssertEqual(navigation.members.last?.at, "/viewB:x", "the route as the daemon wrote it")
        XCTAssertEqual(navigation.members.last?.role, .view)

        let unchanged = Counter()
        observeMembers(navigation, into: unchanged)
        navigation.receive([.members([ada, bo])], from: 0)
        XCTAssertEqual(unchanged.value, 0, "the same list changes nothing observable")

        let left = Counter()
        observeMembers(navigation, into: left)
        navigation.receive([.members([ada])], from: 0)
        XCTAssertEqual(left.value, 1)
        XCTAssertEqual(navigation.members.map(\.id), ["1"])
    }

    func test_outbox_keepsOnlyTheNewestWaitingMemberList() {
        var outbox = EngineOutbox()
        XCTAssertTrue(outbox.append(.members([])))
        XCTAssertFalse(outbox.append(.members([Member(id: "1", name: "a", role: .view)])))
        XCTAssertEqual(outbox.takeAll(), [.members([Member(id: "1", name: "a", role: .view)])])
    }

    func test_start_withAnInvalidName_throwsInvalidDataWithoutConnecting() async {
        let navigation = SharedNavigation<ABCScreen>(connect: "127.0.0.1:1", name: "two words")
        do {
            try await navigation.start()
            XCTFail("started")
        } catch let error as NavSyncError {
            guard case .invalidData = error else { return XCTFail("\(error)") }
        } catch {
            XCTFail("\(error)")
        }
        XCTAssertEqual(navigation.connection, .idle)
    }
}
