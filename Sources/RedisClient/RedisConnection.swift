import CHiredis
import UVLoop

/// One connection to Redis through hiredis's asynchronous API, driven by the
/// daemon's own libuv loop. Commands are sent as argument vectors and their
/// replies come back in order, each to the handler given with it; a
/// connection that has subscribed receives pushes instead.
///
/// hiredis does not reconnect: when the connection is lost, every command
/// still waiting is answered with nil, `onGone` runs once with the reason,
/// and this object is finished. The owner makes a new one (with backoff).
///
/// Must be used on the loop thread only.
public final class RedisConnection: RedisLink {
    public typealias ReplyHandler = (RedisReply?) -> Void

    /// A command that gets no reply within this long is taken as a hung
    /// Redis: the connection is dropped, which fails everything pending.
    public let replyTimeoutMilliseconds: UInt64

    private let loop: EventLoop
    private var context: UnsafeMutablePointer<redisAsyncContext>?
    private var isReady = false
    private var isGone = false
    /// Handlers of commands sent and not yet answered, oldest first, with the
    /// loop time each was sent at.
    private var pending: [(handler: ReplyHandler, sentAt: UInt64)] = []
    private var pendingHead = 0
    private var onReady: (() -> Void)?
    private var onGone: ((String) -> Void)?
    private var onPush: ((RedisReply) -> Void)?
    private var watchdog: LoopTimer?

    /// Starts connecting. `onReady` runs once the connection can take
    /// commands (after `SELECT` when the endpoint names a database);
    /// `onGone` runs once when it fails or is lost, never after `close()`.
    /// With `credentials`, `AUTH` is the first command of the
    /// connection; a refusal ends it with Redis's reason (which never holds
    /// the password).
    public init(loop: EventLoop, endpoint: RedisEndpoint, replyTimeoutMilliseconds: UInt64 = 5_000,
                credentials: RedisCredentials? = nil,
                onReady: @escaping () -> Void, onGone: @escaping (String) -> Void) {
        self.credentials = credentials
        self.loop = loop
        self.replyTimeoutMilliseconds = replyTimeoutMilliseconds
        self.onReady = onReady
        self.onGone = onGone
        let context: UnsafeMutablePointer<redisAsyncContext>?
        switch endpoint {
        case .tcp(let host, let port, _):
            context = redisAsyncConnect(host, Int32(port))
        case .unix(let path, _):
            context = redisAsyncConnectUnix(path)
        }
        guard let context else {
            fail(later: "out of memory")
            return
        }
        if context.pointee.err != 0 {
            let reason = Self.errorText(context)
            redisAsyncFree(context)
            fail(later: reason)
            return
        }
        guard navsync_redis_attach(context, loop.uvLoopPointer) == REDIS_OK else {
            redisAsyncFree(context)
            fail(later: "cannot attach to the event loop")
            return
        }
        self.context = context
        // hiredis keeps this pointer for us; it is cleared before every free
        // this object starts, so no callback can reach a dead object.
        context.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        redisAsyncSetConnectCallback(context) { context, status in
            guard let connection = RedisConnection.owner(context) else { return }
            connection.connected(status == REDIS_OK, reason: context.map { RedisConnection.errorText($0) } ?? "")
        }
        redisAsyncSetDisconnectCallback(context) { context, _ in
            guard let connection = RedisConnection.owner(context) else { return }
            // hiredis frees the context right after this callback.
            connection.context = nil
            connection.finish(context.map { RedisConnection.errorText($0) } ?? "connection closed")
        }
        let endpointDatabase = endpoint.database
        pendingDatabase = endpointDatabase
        startedAt = loop.nowMilliseconds
        let timer = LoopTimer(loop: loop)
        let period = max(replyTimeoutMilliseconds / 4, 10)
        timer.start(afterMilliseconds: period, repeatMilliseconds: period) { [unowned self] in self.checkTimeout() }
        watchdog = timer
    }

    private var pendingDatabase = 0
    private let credentials: RedisCredentials?
    private var startedAt: UInt64 = 0

    deinit {
        close()
    }

    /// True once connected and until lost or closed.
    public var isConnected: Bool { isReady && !isGone }

    /// Sends one command. Returns false (and never calls `then`) when the
    /// connection is not ready; otherwise `then` runs once with the reply, or
    /// with nil if the connection is lost first.
    /// (Text arguments: `RedisLink.send(_:then:)`.)
    @discardableResult
    public func send(_ arguments: [[UInt8]], then: @escaping ReplyHandler) -> Bool {
        guard isReady, !isGone, let context else { return false }
        return issue(context, arguments, then: then)
    }

    /// Subscribes to channels; every push (confirmations and messages) goes
    /// to `onPush`. A subscribed connection takes no other command.
    @discardableResult
    public func subscribe(_ channels: [String], onPush: @escaping (RedisReply) -> Void) -> Bool {
        guard isReady, !isGone, let context else { return false }
        self.onPush = onPush
        return withArgv([Array("SUBSCRIBE".utf8)] + channels.map { Array($0.utf8) }) { argc, argv, lengths in
            redisAsyncCommandArgv(context, { context, reply, _ in
                guard let connection = RedisConnection.owner(context), let reply else { return }
                connection.onPush?(RedisReply(reply.assumingMemoryBound(to: redisReply.self)))
            }, nil, argc, argv, lengths) == REDIS_OK
        }
    }

    /// Closes at once. Commands still pending are answered with nil;
    /// `onGone` is not called.
    public func close() {
        onGone = nil
        onReady = nil
        onPush = nil
        drop("closed")
    }

    // MARK: - Internals

    private func issue(_ context: UnsafeMutablePointer<redisAsyncContext>, _ arguments: [[UInt8]],
                       then: @escaping ReplyHandler) -> Bool {
        let sent = withArgv(arguments) { argc, argv, lengths in
            redisAsyncCommandArgv(context, { context, reply, _ in
                guard let connection = RedisConnection.owner(context) else { return }
                connection.answered(reply.map { RedisReply($0.assumingMemoryBound(to: redisReply.self)) })
            }, nil, argc, argv, lengths) == REDIS_OK
        }
        if sent { pending.append((then, loop.nowMilliseconds)) }
        return sent
    }

    private func withArgv(_ arguments: [[UInt8]],
                          _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> Bool) -> Bool {
        // hiredis copies the arguments into its output buffer before returning.
        let storage = arguments.map { bytes -> UnsafeMutablePointer<CChar> in
            let p = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
            bytes.withUnsafeBufferPointer { source in
                source.withMemoryRebound(to: CChar.self) { p.initialize(from: $0.baseAddress!, count: bytes.count) }
            }
            return p
        }
        defer { storage.forEach { $0.deallocate() } }
        var argv = storage.map { UnsafePointer<CChar>?(UnsafePointer($0)) }
        let lengths = arguments.map(\.count)
        return argv.withUnsafeMutableBufferPointer { argvBuffer in
            lengths.withUnsafeBufferPointer { lengthBuffer in
                body(Int32(arguments.count), argvBuffer.baseAddress!, lengthBuffer.baseAddress!)
            }
        }
    }

    private func connected(_ ok: Bool, reason: String) {
        guard ok else {
            // hiredis frees a context whose connect failed after this callback.
            context = nil
            finish(reason.isEmpty ? "cannot connect" : reason)
            return
        }
        if let credentials, let context {
            _ = issue(context, credentials.authArguments) { [unowned self] reply in
                if case .status = reply { self.selectDatabase() } else {
                    self.drop("redis refused AUTH as \(credentials): \(reply?.errorText ?? "no reply")")
                }
            }
        } else {
            selectDatabase()
        }
    }

    private func selectDatabase() {
        if pendingDatabase != 0, let context {
            _ = issue(context, [Array("SELECT".utf8), Array(String(pendingDatabase).utf8)]) { [unowned self] reply in
                if case .status = reply { self.becomeReady() } else {
                    self.drop("SELECT \(self.pendingDatabase) failed: \(reply?.errorText ?? "no reply")")
                }
            }
        } else {
            becomeReady()
        }
    }

    private func becomeReady() {
        guard !isGone else { return }
        isReady = true
        let ready = onReady
        onReady = nil
        ready?()
    }

    private func answered(_ reply: RedisReply?) {
        guard pendingHead < pending.count else { return }
        let handler = pending[pendingHead].handler
        pendingHead += 1
        if pendingHead == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingHead = 0
        } else if pendingHead > 1024 && pendingHead * 2 > pending.count {
            pending.removeFirst(pendingHead)
            pendingHead = 0
        }
        handler(reply)
    }

    private func checkTimeout() {
        if !isReady && loop.nowMilliseconds &- startedAt >= replyTimeoutMilliseconds {
            drop("cannot connect within \(replyTimeoutMilliseconds) ms")
            return
        }
        guard pendingHead < pending.count else { return }
        let age = loop.nowMilliseconds &- pending[pendingHead].sentAt
        if age >= replyTimeoutMilliseconds {
            drop("no reply within \(replyTimeoutMilliseconds) ms")
        }
    }

    /// Ends the connection from our side; pending handlers get nil.
    private func drop(_ reason: String) {
        if let context {
            self.context = nil
            context.pointee.data = nil
            redisAsyncFree(context)
        }
        finish(reason)
    }

    private func finish(_ reason: String) {
        guard !isGone else { return }
        isGone = true
        isReady = false
        watchdog?.close()
        watchdog = nil
        let waiting = pending[pendingHead...].map(\.handler)
        pending.removeAll()
        pendingHead = 0
        for handler in waiting { handler(nil) }
        let gone = onGone
        onGone = nil
        onReady = nil
        onPush = nil
        gone?(reason)
    }

    /// Reports a failure from a later loop turn, so the caller's `init` has returned first.
    private func fail(later reason: String) {
        isGone = true
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: 0) { [weak self, timer] in
            timer.close()
            guard let self else { return }
            let gone = self.onGone
            self.onGone = nil
            gone?(reason)
        }
    }

    private static func owner(_ context: UnsafePointer<redisAsyncContext>?) -> RedisConnection? {
        guard let data = context?.pointee.data else { return nil }
        return Unmanaged<RedisConnection>.fromOpaque(data).takeUnretainedValue()
    }

    private static func errorText(_ context: UnsafePointer<redisAsyncContext>) -> String {
        // `errstr` of the async context points into the inner context's fixed buffer.
        let text = withUnsafeBytes(of: context.pointee.c.errstr) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return text.isEmpty ? "connection lost" : text
    }
}
