import XCTest
import NavSyncCore
import RedisClient
import UVLoop
@testable import NavSyncServer
@testable import NavSyncBackplane

/// The connection's state machine alone, on scripted links, with an owner
/// that records what it is told: no rooms, no hub beyond a catalog.
final class BackplaneConnectionTests: XCTestCase {
    /// Records each call of the connection, one line each.
    private final class RecordingOwner: BackplaneConnectionOwner {
        let hubStandIn = CatalogOnlyHub()
        var calls: [String] = []
        /// Set by `connectionSubscribed`: the owner's read is done when the test calls it.
        var finishReading: (() -> Void)?

        var hub: RoomStoreDelegate? { hubStandIn }
        func connectionFoundNewEpoch() { calls.append("new epoch") }
        func connectionSubscribed(_ attempt: RedisAttempt, up: @escaping () -> Void) {
            calls.append("subscribed")
            finishReading = up
        }
        func connectionBecameUp() { calls.append("up") }
        func connectionReceived(channel: String, payload: [UInt8]) {
            calls.append("push \(channel) \(String(decoding: payload, as: UTF8.self))")
        }
        func connectionHeartbeat(_ attempt: RedisAttempt) { calls.append("heartbeat") }
        func connectionWentDown(because reason: String) { calls.append("down \(reason)") }
    }

    /// The one part of a hub the connection asks for: the catalog.
    private final class CatalogOnlyHub: RoomStoreDelegate {
        var adopted: [Catalog] = []
        func storedState(of room: String) -> RoomState? { nil }
        var roomsWithStateCount: Int { 0 }
        var changeRules: ChangeRules { ChangeRules(catalog: .builtIn, maxDepth: 8, maxRooms: 10) }
        var roomStates: [String: RoomState] { [:] }
        func changeFinished(_ change: ChangeRequest, _ outcome: ChangeOutcome) {}
        func roomChanged(_ room: String, to state: RoomState, op: String) {}
        func roomReplaced(_ room: String, with state: RoomState?) {}
        func catalogChanged(to catalog: Catalog) { adopted.append(catalog) }
        func undurableChangesSettled(durable: Bool) {}
    }

    private let keys = BackplaneKeys(prefix: "t:")
    private let redis = ScriptedRedis()
    private let owner = RecordingOwner()
    private var loop: EventLoop!
    private var connection: BackplaneConnection!
    private var started: String?

    override func setUpWithError() throws {
        loop = try EventLoop()
        connection = BackplaneConnection(loop: loop, keys: keys, endpoint: .tcp(host: "127.0.0.1", port: 6379, database: 0),
                                         replaceCatalog: false, log: .silent, connector: redis.connector)
        connection.owner = owner
        connection.start { [unowned self] error in started = error?.description ?? "up" }
    }

    override func tearDown() {
        connection.close()
        loop.runOnce(nowait: true)
        loop.shutdown()
    }

    @discardableResult
    private func answer(_ verb: String, _ reply: RedisReply, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        let command = redis.commands.answer(reply)
        XCTAssertEqual(command?.first, verb, "sent \(command ?? []) where \(verb) was due", file: file, line: line)
        return command ?? []
    }

    /// Both links connect and Redis answers every step of the handshake up to the subscription.
    private func handshake(version: String = "7.2.4", epoch: String = "e1") {
        redis.commands.becomeReady()
        redis.subscriber.becomeReady()
        answer("INFO", .bulk("# Server\r\nredis_version:\(version)\r\n"))
        guard version.hasPrefix("7") else { return }
        answer("FUNCTION", .bulk("navsync"))
        answer("FUNCTION", .bulk("navsync_presence"))
        answer("SET", .null)
        answer("GET", .bulk(epoch))
        answer("SET", .null)
        answer("GET", .string(CatalogFile.encode(.builtIn)))
        redis.subscriber.confirmSubscriptions()
    }

    func test_connection_stepsInOrder_pushesHeldWhileTheOwnerReads_thenUp() {
        handshake()
        XCTAssertEqual(owner.calls, ["subscribed"])
        XCTAssertFalse(connection.isUp, "not up before the owner has read its rooms")
        redis.subscriber.message(channel: keys.changesChannel, "first")
        redis.subscriber.message(channel: keys.changesChannel, "second")
        XCTAssertEqual(owner.calls, ["subscribed"], "held")
        owner.finishReading?()
        XCTAssertEqual(owner.calls, ["subscribed", "push \(keys.changesChannel) first", "push \(keys.changesChannel) second", "up"])
        XCTAssertTrue(connection.isUp)
        XCTAssertEqual(connection.epoch, "e1")
        XCTAssertEqual(started, "up")
        redis.subscriber.message(channel: keys.changesChannel, "third")
        XCTAssertEqual(owner.calls.last, "push \(keys.changesChannel) third", "handed over at once once up")
    }

    func test_connection_redisTooOldAtStart_isFatal_noReconnect() {
        handshake(version: "6.2.0")
        XCTAssertEqual(started?.contains("redis 6.2.0 is too old"), true, started ?? "nil")
        XCTAssertNil(connection.attempt)
        XCTAssertEqual(redis.attempts, 1)
    }

    func test_connection_lostWhileUp_ownerToldOnce_outageCounted_reconnectsWithBackoff() {
        handshake()
        owner.finishReading?()
        owner.calls.removeAll()
        redis.commands.lose("connection reset")
        XCTAssertEqual(owner.calls, ["down redis at redis://127.0.0.1:6379 unreachable: connection reset"])
        XCTAssertFalse(connection.isUp)
        XCTAssertEqual(connection.outages, 1)
        for _ in 0..<40 where redis.attempts < 2 { loop.runOnce(nowait: false) }
        XCTAssertEqual(redis.attempts, 2, "a new attempt after the backoff")
        // The fleet's data was replaced meanwhile: another epoch.
        handshake(epoch: "e2")
        XCTAssertEqual(owner.calls.suffix(2), ["new epoch", "subscribed"])
        owner.finishReading?()
        XCTAssertTrue(connection.isUp)
        XCTAssertEqual(connection.outages, 1)
    }

    func test_connection_fleetCatalogDiffersLater_isAdopted_notRefused() throws {
        handshake()
        owner.finishReading?()
        redis.commands.lose("connection reset")
        for _ in 0..<40 where redis.attempts < 2 { loop.runOnce(nowait: false) }
        redis.commands.becomeReady()
        redis.subscriber.becomeReady()
        answer("INFO", .bulk("# Server\r\nredis_version:7.2.4\r\n"))
        answer("FUNCTION", .bulk("navsync"))
        answer("FUNCTION", .bulk("navsync_presence"))
        answer("SET", .null)
        answer("GET", .bulk("e1"))
        answer("SET", .null)
        var screens = Catalog.builtIn.screens
        screens[0].title += " (renamed)"
        let other = try Catalog(initial: Catalog.builtIn.initial, screens: screens)
        answer("GET", .string(CatalogFile.encode(other)))
        XCTAssertEqual(owner.hubStandIn.adopted, [other], "a running daemon adopts the fleet's catalog")
    }
}
