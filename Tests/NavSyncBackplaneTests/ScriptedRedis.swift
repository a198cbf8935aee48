import RedisClient
@testable import NavSyncBackplane

/// A Redis link with no IO, in the manner of NIO's `EmbeddedChannel`: it
/// records every command the store sends and keeps its reply handler until
/// the test answers it. Like a real connection it answers in sending order
/// (`answer` settles the oldest command), pushes arrive only when the test
/// says so, and a lost link answers everything pending with nil before its
/// lost callback runs. So the test, not the network, picks the order in
/// which replies of one link and pushes of the other reach the store.
final class ScriptedRedisLink: RedisLink {
    /// Every command sent, as text, oldest first.
    private(set) var sent: [[String]] = []
    private var pending: [(command: [String], then: (RedisReply?) -> Void)] = []
    private var onReady: (() -> Void)?
    private var onGone: ((String) -> Void)?
    private var onPush: ((RedisReply) -> Void)?
    private var isReady = false
    private(set) var isGone = false
    private(set) var subscribedChannels: [String] = []

    init(onReady: @escaping () -> Void, onGone: @escaping (String) -> Void) {
        self.onReady = onReady
        self.onGone = onGone
    }

    // MARK: RedisLink

    func send(_ arguments: [[UInt8]], then: @escaping (RedisReply?) -> Void) -> Bool {
        guard isReady, !isGone else { return false }
        let command = arguments.map { String(decoding: $0, as: UTF8.self) }
        sent.append(command)
        pending.append((command, then))
        return true
    }

    func subscribe(_ channels: [String], onPush: @escaping (RedisReply) -> Void) -> Bool {
        guard isReady, !isGone else { return false }
        sent.append(["SUBSCRIBE"] + channels)
        subscribedChannels = channels
        self.onPush = onPush
        return true
    }

    func close() {
        onGone = nil
        end()
    }

    // MARK: The test's side

    /// The link is connected: its `onReady` runs.
    func becomeReady() {
        isReady = true
        let ready = onReady
        onReady = nil
        ready?()
    }

    /// The commands sent and not answered yet, oldest first.
    var unanswered: [[String]] { pending.map(\.command) }

    /// Answers the oldest unanswered command and returns it (nil: none was waiting).
    @discardableResult
    func answer(_ reply: RedisReply) -> [String]? {
        guard !pending.isEmpty else { return nil }
        let (command, then) = pending.removeFirst()
        then(reply)
        return command
    }

    /// Delivers a push as Redis sends it on a subscribed connection.
    func push(_ reply: RedisReply) {
        onPush?(reply)
    }

    /// A `PUBLISH` on one of the subscribed channels.
    func message(channel: String, _ payload: String) {
        push(.array([.string(Array("message".utf8)), .string(Array(channel.utf8)), .string(Array(payload.utf8))]))
    }

    /// Confirms every channel of the `SUBSCRIBE`, one push each.
    func confirmSubscriptions() {
        for (index, channel) in subscribedChannels.enumerated() {
            push(.array([.string(Array("subscribe".utf8)), .string(Array(channel.utf8)), .integer(Int64(index + 1))]))
        }
    }

    /// The connection breaks: pending commands get nil, then the lost callback runs.
    func lose(_ reason: String) {
        let gone = onGone
        onGone = nil
        end()
        gone?(reason)
    }

    private func end() {
        guard !isGone else { return }
        isGone = true
        isReady = false
        onReady = nil
        onPush = nil
        let waiting = pending
        pending.removeAll()
        for (_, then) in waiting { then(nil) }
    }
}

/// The connector a store is given in tests: every link it makes is kept,
/// the store's command link and subscriber link of each attempt in turn.
final class ScriptedRedis {
    private(set) var links: [ScriptedRedisLink] = []

    var connector: RedisRoomStore.Connector {
        { [unowned self] onReady, onGone in
            let link = ScriptedRedisLink(onReady: onReady, onGone: onGone)
            self.links.append(link)
            return link
        }
    }

    /// The command link of the newest connection attempt.
    var commands: ScriptedRedisLink { links[links.count - 2] }
    /// The subscriber link of the newest connection attempt.
    var subscriber: ScriptedRedisLink { links[links.count - 1] }
    var attempts: Int { links.count / 2 }
}
