import Glibc
import NavSyncCore
import NavSyncTLS
import UVLoop

/// Runs a `SyncClient` on a libuv loop: it does the socket work the state
/// machine asks for, feeds it what happened, and keeps one timer armed for
/// the machine's next deadline. Callers watch `onNote`.
///
/// Single-threaded: create it, use it and let its callbacks run on the loop thread.
public final class ClientDriver {
    /// Tried in turn: each connect attempt takes the next one, so a list of
    /// daemons sharing one backplane is walked on start and on every reconnect.
    public var endpoints: [Endpoint] { walk.endpoints }
    /// The address of the current (or the last) connect attempt.
    public var endpoint: Endpoint { walk.current }
    private var walk: EndpointWalk
    public private(set) var client: SyncClient
    /// Called for every note, in order, on the loop thread. It may call `submit` or `stop`.
    public var onNote: ((ClientNote) -> Void)?

    private let loop: EventLoop
    private let timer: LoopTimer
    private var connection: (any ByteStream)?
    /// Whom `tls://` addresses must prove they are.
    private let trust: TLSTrust
    /// Bumped whenever the current connection (or attempt) is abandoned, so
    /// callbacks from an older one are recognised and ignored.
    private var generation = 0
    /// Daemon lines can be long (a deep stack of percent-encoded data); this
    /// bounds what one broken peer can make the client hold.
    private var framer = LineFramer(maxLineBytes: 1 << 22)
    private var queue: [ClientAction] = []
    private var performing = false
    /// A whole line came on this connection: from then on its bytes are the protocol's.
    private var heardLine = false

    public convenience init(loop: EventLoop, endpoint: Endpoint, options: SyncClientOptions, tlsCA: String? = nil) {
        self.init(loop: loop, endpoints: [endpoint], options: options, tlsCA: tlsCA)
    }

    /// `endpoints` must not be empty. `tlsCA`: a PEM file of roots trusted
    /// for `tls://` addresses besides the system's.
    public init(loop: EventLoop, endpoints: [Endpoint], options: SyncClientOptions, tlsCA: String? = nil) {
        precondition(!endpoints.isEmpty, "ClientDriver needs at least one endpoint")
        self.loop = loop
        self.trust = TLSTrust(extraRootsFile: tlsCA)
        self.walk = EndpointWalk(endpoints)
        var seed = UInt64(truncatingIfNeeded: getpid())
        seed = seed << 32 ^ loop.nowMilliseconds ^ UInt64(truncatingIfNeeded: time(nil))
        self.client = SyncClient(options: options, seed: seed)
        self.timer = LoopTimer(loop: loop)
    }

    /// The loop's clock, which every time the state machine sees is measured on.
    public var now: UInt64 { loop.nowMilliseconds }

    /// Starts connecting. Must be called on the loop thread.
    public func start() {
        perform(client.start(now: now))
    }

    /// (1.3) The token later connections authenticate with (a renewed signed token).
    public func replaceToken(_ token: String?) { client.replaceToken(token) }

    /// Sends a request (or queues it until the first connection). Its reply
    /// arrives later as `.reply(id, ...)`; the caller may not see the id
    /// before a reply that is known at once (`.invalid`, `.lost`).
    @discardableResult
    public func submit(_ request: ClientRequest) -> RequestID {
        let (id, actions) = client.submit(request, now: now)
        perform(actions)
        return id
    }

    /// Closes the connection and the timer for good. With `sayingQuit`, a
    /// connection that is up is told `QUIT` first (best effort: the line is
    /// handed to the kernel if it takes it, and nobody waits for `BYE`), so
    /// the daemon frees the slot at once instead of noticing later.
    /// Must be called on the loop thread.
    public func stop(sayingQuit: Bool = false) {
        switch client.link {
        case .handshaking, .live:
            if sayingQuit { connection?.write([Array("QUIT\n".utf8)]) }
        default:
            break
        }
        perform(client.stop(now: now))
        timer.close()
    }

    // MARK: Carrying out actions

    /// Runs actions in order. A note handler that submits more work appends
    /// to the same queue, so nothing overtakes what was decided earlier.
    private func perform(_ actions: [ClientAction]) {
        queue += actions
        guard !performing else { return }
        performing = true
        var outgoing = ""
        while !queue.isEmpty {
            let action = queue.removeFirst()
            switch action {
            case .connect:
                flush(&outgoing)
                connect()
            case .send(let text):
                outgoing += text
            case .disconnect:
                outgoing = ""
                dropConnection()
            case .note(let note):
                let handler = onNote
                handler?(note)
            }
        }
        flush(&outgoing)
        performing = false
        armTimer()
    }

    private func flush(_ outgoing: inout String) {
        guard !outgoing.isEmpty else { return }
        connection?.write([Array(outgoing.utf8)])
        outgoing = ""
    }

    private func armTimer() {
        guard let wake = client.nextWakeUp else {
            timer.stop()
            return
        }
        let current = now
        // At least 1 ms, so a deadline that is due keeps the loop turning instead of spinning inside it.
        let after = wake > current ? wake - current : 1
        timer.start(afterMilliseconds: after) { [weak self] in
            guard let self else { return }
            self.perform(self.client.tick(now: self.now))
        }
    }

    private func dropConnection() {
        generation += 1
        heardLine = false
        connection?.close()
        connection = nil
        framer = LineFramer(maxLineBytes: framer.maxLineBytes)
    }

    private func connect() {
        dropConnection()
        let endpoint = walk.advance()
        if case .tcp = endpoint {
            client.silenceHint = "if this address speaks TLS: use tls://\(endpoint)"
        } else {
            client.silenceHint = nil
        }
        let attempt = generation
        let completion: (Result<any ByteStream, ConnectFailure>) -> Void = { [weak self] result in
            guard let self else {
                if case .success(let connection) = result { connection.close() }
                return
            }
            self.connected(result, attempt: attempt)
        }
        if let problem = Self.open(endpoint, loop: loop, trust: trust, completion: completion) { attemptFailed(problem) }
    }

    /// Why a connection could not be made, in one line.
    public struct ConnectFailure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// A TLS handshake gets this long; the state machine's connect timeout
    /// (which covers the handshake too) is usually shorter.
    static let tlsHandshakeMilliseconds: UInt64 = 10_000

    /// Starts connecting to `endpoint`; `completion` runs when it is done —
    /// for `tls://`, once the handshake has finished and the certificate was
    /// found to name the host, else with the reason it was refused. Returns
    /// why no attempt could start (a host that does not resolve), in which
    /// case `completion` never runs.
    public static func open(_ endpoint: Endpoint, loop: EventLoop, trust: TLSTrust,
                            completion: @escaping (Result<any ByteStream, ConnectFailure>) -> Void) -> String? {
        let plain: (Result<StreamConnection, UVError>) -> Void = { result in
            switch result {
            case .success(let connection):
                connection.setNoDelay(true)
                completion(.success(connection))
            case .failure(let error):
                completion(.failure(ConnectFailure(error.description)))
            }
        }
        switch endpoint {
        case .unix(let path):
            StreamConnection.connectUnix(loop: loop, path: path, completion: plain)
        case .tcp(let host, let port):
            guard let address = resolve(host) else { return "cannot resolve host \(host)" }
            StreamConnection.connectTCP(loop: loop, host: address, port: port, completion: plain)
        case .tls(let host, let port):
            guard let address = resolve(host) else { return "cannot resolve host \(host)" }
            StreamConnection.connectTCP(loop: loop, host: address, port: port) { result in
                switch result {
                case .success(let connection):
                    connection.setNoDelay(true)
                    shakeHands(over: connection, name: host, loop: loop, trust: trust, completion: completion)
                case .failure(let error):
                    completion(.failure(ConnectFailure(error.description)))
                }
            }
        }
        return nil
    }

    /// TLS over a connected stream; the certificate must name `name`, the host as the user wrote it.
    private static func shakeHands(over connection: StreamConnection, name: String, loop: EventLoop, trust: TLSTrust,
                                   completion: @escaping (Result<any ByteStream, ConnectFailure>) -> Void) {
        let engine: TLSEngine
        do {
            engine = try TLSEngine(client: trust.context().get(), serverName: name)
        } catch {
            connection.close()
            completion(.failure(ConnectFailure("TLS: \(error)")))
            return
        }
        let tls = TLSStream(transport: connection, engine: engine, loop: loop)
        // The stream's callbacks hold it until one of them has run.
        tls.onEstablished = { completion(.success(tls)) }
        tls.onHandshakeFailed = { reason in
            completion(.failure(ConnectFailure("TLS: " + TLSFailureWords.handshake(reason, host: name))))
        }
        tls.beginHandshake(timeoutMilliseconds: tlsHandshakeMilliseconds)
    }

    private func connected(_ result: Result<any ByteStream, ConnectFailure>, attempt: Int) {
        guard attempt == generation else {
            if case .success(let stale) = result { stale.close() }
            return
        }
        switch result {
        case .failure(let error):
            attemptFailed(error.description)
        case .success(let connection):
            walk.succeeded()
            self.connection = connection
            connection.onRead = { [weak self] bytes in
                self?.read(bytes, attempt: attempt)
            }
            connection.onEnd = { [weak self] end in
                guard let self, attempt == self.generation else { return }
                let reason: String
                switch end {
                case .eof: reason = "the daemon closed the connection"
                case .error(let error): reason = error.description
                }
                self.perform(self.client.connectionEnded(reason, now: self.now))
            }
            connection.startReading()
            perform(client.connectSucceeded(now: now))
        }
    }

    /// One address failed: the next is tried at once, and only a round in
    /// which every address failed reaches the state machine (which backs
    /// off, or ends a one-shot command), so a dead daemon in the list costs
    /// one quick attempt.
    private func attemptFailed(_ reason: String) {
        switch walk.failed(reason) {
        case .tryNext:
            // Inside `perform` this joins its queue rather than re-entering.
            perform([.connect])
        case .roundFailed(let first):
            perform(client.connectFailed(endpoints.count == 1 ? reason : "every address failed, the first with \(first)", now: now))
        }
    }

    private func read(_ bytes: UnsafeRawBufferPointer, attempt: Int) {
        guard attempt == generation else { return }
        // A plain client on a TLS port reads a TLS alert, not a line: say so in words.
        if !heardLine, case .tcp = endpoint, TLSFailureWords.looksLikeTLS(bytes) {
            perform(client.connectionEnded(TLSFailureWords.speaksTLS(endpoint), now: now))
            return
        }
        if bytes.contains(UInt8(ascii: "\n")) { heardLine = true }
        framer.append(bytes)
        var actions: [ClientAction] = []
        while attempt == generation, let frame = framer.next() {
            switch frame {
            case .line(let line):
                actions += client.received(String(decoding: line, as: UTF8.self), now: now)
            case .tooLong:
                actions += client.connectionEnded("the daemon sent a line over \(framer.maxLineBytes) bytes", now: now)
            }
            // A disconnect decided here must stop the reading of this buffer.
            if actions.contains(.disconnect) { break }
        }
        perform(actions)
    }

    /// An IP literal as is; a host name through the resolver (blocking, as
    /// the C library's resolver is; typically /etc/hosts for a local daemon).
    public static func resolve(_ host: String) -> String? {
        var probe = in6_addr()
        if inet_pton(AF_INET, host, &probe) == 1 || inet_pton(AF_INET6, host, &probe) == 1 { return host }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let list else { return nil }
        defer { freeaddrinfo(list) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            let info = current.pointee
            if info.ai_family == AF_INET, let address = info.ai_addr {
                var v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                if inet_ntop(AF_INET, &v4, &text, socklen_t(text.count)) != nil { return Self.string(text) }
            } else if info.ai_family == AF_INET6, let address = info.ai_addr {
                var v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                if inet_ntop(AF_INET6, &v6, &text, socklen_t(text.count)) != nil { return Self.string(text) }
            }
            entry = info.ai_next
        }
        return nil
    }

    private static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
