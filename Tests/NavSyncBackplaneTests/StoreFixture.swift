import XCTest
import NavSyncCore
import UVLoop
import RedisClient
@testable import NavSyncServer
@testable import NavSyncBackplane

/// What the store told its delegate, in order, as one line each: the hub
/// (a real `Server`) still gets every call, so replies and events reach the
/// client as they would in the daemon.
final class ReportRecorder: RoomStoreDelegate {
    private let hub: Server
    private(set) var reports: [String] = []

    init(forwardingTo hub: Server) { self.hub = hub }

    /// The reports since the last call.
    func take() -> [String] {
        defer { reports.removeAll() }
        return reports
    }

    func storedState(of room: String) -> RoomState? { hub.storedState(of: room) }
    var roomsWithStateCount: Int { hub.roomsWithStateCount }
    var changeRules: ChangeRules { hub.changeRules }
    var roomStates: [String: RoomState] { hub.roomStates }

    func changeFinished(_ change: ChangeRequest, _ outcome: ChangeOutcome) {
        switch outcome {
        case .applied(let state): reports.append("finished \(change.room) applied \(state.revision) \(state.route)")
        case .unchanged(let revision): reports.append("finished \(change.room) unchanged \(revision)")
        case .refused(let error): reports.append("finished \(change.room) refused \(error.code) \(error.message)")
        }
        hub.changeFinished(change, outcome)
    }

    func roomChanged(_ room: String, to state: RoomState, op: String) {
        reports.append("changed \(room) \(state.revision) \(state.route)")
        hub.roomChanged(room, to: state, op: op)
    }

    func roomReplaced(_ room: String, with state: RoomState?) {
        reports.append("replaced \(room) \(state.map { "\($0.revision) \($0.route)" } ?? "none")")
        hub.roomReplaced(room, with: state)
    }

    func catalogChanged(to catalog: Catalog) {
        reports.append("catalog changed")
        hub.catalogChanged(to: catalog)
    }

    func undurableChangesSettled(durable: Bool) { hub.undurableChangesSettled(durable: durable) }

    func memberChangedElsewhere(_ member: Member, in room: String) {
        reports.append("member \(room) \(member.id) \(member.name) \(member.role.rawValue) \(member.atText)")
        hub.memberChangedElsewhere(member, in: room)
    }

    func memberGoneElsewhere(_ id: String, from room: String) {
        reports.append("gone \(room) \(id)")
        hub.memberGoneElsewhere(id, from: room)
    }

    func membersReplaced(in room: String, with members: [Member]) {
        reports.append("members \(room) \(members.map(\.id).joined(separator: ","))")
        hub.membersReplaced(in: room, with: members)
    }

    var roomsWithMembers: [String] { hub.roomsWithMembers }

    func relistPresence() { hub.relistPresence() }
}

/// A client's connection with no IO: keeps what the hub writes to it.
final class RecordingClient: Connection {
    private var text = ""
    private var linesTaken = 0
    let queuedWriteBytes = 0
    let peerDescription = "scripted"

    func write(_ chunks: [[UInt8]]) { for chunk in chunks { text += String(decoding: chunk, as: UTF8.self) } }
    func writeWithoutQueuing(_ chunks: [[UInt8]]) -> Int {
        write(chunks)
        return chunks.reduce(0) { $0 + $1.count }
    }
    func pauseReading() {}
    func resumeReading() {}
    func close() {}
    func closeAfterSending() {}

    /// Complete lines written since the last call.
    func newLines() -> [String] {
        let all = text.split(separator: "\n").map(String.init)
        defer { linesTaken = all.count }
        return Array(all[linesTaken...])
    }
}

/// A `RedisRoomStore` on scripted links, a hub as its delegate (through the
/// recorder) and one client of the hub in room `main`.
final class StoreFixture {
    static let epoch = "e1"
    let loop: EventLoop
    let redis = ScriptedRedis()
    let store: RedisRoomStore
    let hub: Server
    let recorder: ReportRecorder
    let keys = BackplaneKeys(prefix: "t:")
    let client = RecordingClient()
    let session: Session
    private(set) var started: String?

    init(rooms: [String: RoomState] = [:], maxRemoteMembers: Int = 100_000) throws {
        loop = try EventLoop()
        var settings = RedisRoomStore.Settings(endpoint: .tcp(host: "127.0.0.1", port: 6379, database: 0), keys: keys,
                                               historyLength: 100, replaceCatalog: false)
        // No test here waits for a reply timeout; a stalled machine must not fire one between scripted steps.
        settings.replyTimeoutMilliseconds = 60_000
        settings.maxRemoteMembers = maxRemoteMembers
        store = RedisRoomStore(loop: loop, settings: settings, log: .silent, connector: redis.connector)
        hub = Server(config: ServerConfig(version: "test"), catalog: .builtIn, rooms: rooms, store: store, log: .silent,
                     secondsSinceStart: { 0 })
        recorder = ReportRecorder(forwardingTo: hub)
        store.delegate = recorder
        session = hub.accept(client)
        _ = client.newLines()
    }

    deinit {
        store.close()
        loop.runOnce(nowait: true)
    }

    /// Answers the oldest command of the command link, checking its verb.
    @discardableResult
    func answer(_ verb: String, _ reply: RedisReply, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        let command = redis.commands.answer(reply)
        XCTAssertEqual(command?.first, verb, "the store sent \(command ?? []) where \(verb) was due", file: file, line: line)
        return command ?? []
    }

    /// Plays a Redis 7 holding `epoch` and this hub's catalog through the
    /// handshake; `rooms` are the room set and each room's state hash
    /// (rev, route, tag), read in name order.
    /// `members` are the fleet's presence (room: [(id, hash value)]); nil leaves that read unanswered.
    func connect(epoch: String = StoreFixture.epoch, rooms: [(String, [RedisReply])] = [],
                 members: [String: [(String, String)]]? = [:],
                 file: StaticString = #filePath, line: UInt = #line) {
        redis.commands.becomeReady()
        redis.subscriber.becomeReady()
        answer("INFO", .string(Array("# Server\r\nredis_version:7.2.4\r\n".utf8)), file: file, line: line)
        answer("FUNCTION", .string(Array("navsync".utf8)), file: file, line: line)
        answer("FUNCTION", .string(Array("navsync_presence".utf8)), file: file, line: line)
        answer("SET", .null, file: file, line: line)
        answer("GET", .string(Array(epoch.utf8)), file: file, line: line)
        answer("SET", .null, file: file, line: line)
        answer("GET", .string(CatalogFile.encode(hub.catalog)), file: file, line: line)
        redis.subscriber.confirmSubscriptions()
        answer("SMEMBERS", .array(rooms.map { .string(Array($0.0.utf8)) }), file: file, line: line)
        for (_, hash) in rooms.sorted(by: { $0.0 < $1.0 }) { answer("HMGET", .array(hash), file: file, line: line) }
        if let members {
            answer("SMEMBERS", .array(members.keys.sorted().map { .bulk($0) }), file: file, line: line)
            for room in members.keys.sorted() {
                answer("HGETALL", .array(members[room]!.flatMap { [.bulk($0.0), .bulk($0.1)] }), file: file, line: line)
            }
        }
    }

    /// `start`, then the handshake: the store is up.
    func start(rooms: [(String, [RedisReply])] = [], file: StaticString = #filePath, line: UInt = #line) {
        store.start { [unowned self] error in self.started = error?.description ?? "up" }
        connect(rooms: rooms, file: file, line: line)
        XCTAssertEqual(started, "up", file: file, line: line)
        XCTAssertNil(store.unavailableReason, file: file, line: line)
    }

    /// The client's lines, as one loop turn: the hub runs them, then flushes
    /// (which ends the store's turn: rounds start).
    @discardableResult
    func run(_ lines: String...) -> [String] {
        for line in lines { hub.receive(Array((line + "\n").utf8), from: session) }
        hub.flush()
        return client.newLines()
    }

    /// What the client received since the last look, after a flush.
    func output() -> [String] {
        hub.flush()
        return client.newLines()
    }

    /// A message on the fleet's changes channel.
    func publish(epoch: String = StoreFixture.epoch, room: String = "main", revision: UInt64, tag: String, op: String,
                 route: String) {
        redis.subscriber.message(channel: keys.changesChannel, "\(epoch) \(room) \(revision) \(tag) \(op) \(route)")
    }

    /// Runs the loop (bounded) until the store has made `attempts` connection attempts.
    func waitForAttempt(_ attempts: Int, file: StaticString = #filePath, line: UInt = #line) {
        for _ in 0..<40 where redis.attempts < attempts { loop.runOnce(nowait: false) }
        XCTAssertEqual(redis.attempts, attempts, "no reconnection attempt", file: file, line: line)
    }
}

/// One round's `FCALL` as the test reads it back: where it starts and each change's step.
struct SentRound {
    var fromRevision: UInt64
    var fromTag: String
    var steps: [(revision: UInt64, op: String, route: String, tag: String)]

    init?(_ command: [String]) {
        guard command.count >= 12, command[0] == "FCALL", command[1] == ChangeFunction.name,
              let from = UInt64(command[7]) else { return nil }
        fromRevision = from
        fromTag = command[8]
        steps = stride(from: 12, to: command.count - 3, by: 4).map {
            (UInt64(command[$0])!, command[$0 + 1], command[$0 + 2], command[$0 + 3])
        }
    }
}

extension RedisReply {
    static func bulk(_ text: String) -> RedisReply { .string(Array(text.utf8)) }
    /// The change function's answer that a round went in, its last change making `revision`.
    static func applied(_ revision: UInt64) -> RedisReply { .array([.bulk("applied"), .integer(Int64(revision))]) }
    static func admitted() -> RedisReply { .bulk("added") }
}
