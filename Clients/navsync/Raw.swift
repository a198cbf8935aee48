import Glibc
import NavSyncClient
import NavSyncCore
import NavSyncTLS
import UVLoop

/// `navsync raw [LINE...]`: the protocol by hand, as `redis-cli` offers it.
/// Each LINE (or each line typed or piped on stdin) goes to the daemon as it
/// is, and every line the daemon sends is printed as it is. When the lines
/// run out the client closes its sending side, the daemon answers what it
/// was sent and closes, and the client exits: 0, or 1 when any answer was an
/// `ERR` or the daemon could not be reached.
///
/// `--room` and `--token-file` are carried out first (`JOIN`, `AUTH`) and
/// their answers are not printed; a refusal there ends the client before
/// any of the user's lines is sent, so nothing runs in the wrong room.
final class RawSession {
    private let loop: EventLoop
    /// Tried in turn until one answers, one round only; `endpoint` is the one in use.
    private var walk: EndpointWalk
    private var endpoint: Endpoint { walk.current }
    private let lines: [String]?
    private let prelude: [String]
    private var preludeLeft: Int
    private var connection: (any ByteStream)?
    /// Whom `tls://` addresses must prove they are.
    private let trust: TLSTrust
    private var framer = LineFramer(maxLineBytes: 1 << 22)
    private var input: FDPoll?
    private var signals: [SignalWatcher] = []
    private var sawError = false
    private var status: Int32 = 0
    private var finished = false
    /// Typing at a terminal: a prompt on stderr after each answer.
    private let prompting: Bool

    /// Talks to the first of `endpoints` that answers, as the other commands
    /// do; once connected, the session stays with that one daemon.
    static func run(lines: [String]?, endpoints: [Endpoint], room: String?, token: String?, tlsCA: String?) -> Int32 {
        guard let loop = ClientLoop.start() else { return 1 }
        let session = RawSession(loop: loop, endpoints: endpoints.isEmpty ? [Endpoint.defaultAddress] : endpoints,
                                 lines: lines, room: room, token: token, tlsCA: tlsCA)
        session.start()
        loop.run()
        loop.shutdown()
        return session.status
    }

    private init(loop: EventLoop, endpoints: [Endpoint], lines: [String]?, room: String?, token: String?, tlsCA: String?) {
        self.loop = loop
        self.trust = TLSTrust(extraRootsFile: tlsCA)
        self.walk = EndpointWalk(endpoints)
        self.lines = lines
        var prelude: [String] = []
        if let token { prelude.append(Verb.auth.line(token)) }
        if let room, room != Names.defaultRoom { prelude.append(Verb.join.line(room)) }
        self.prelude = prelude
        self.preludeLeft = prelude.count
        self.prompting = lines == nil && isatty(0) == 1 && isatty(2) == 1
    }

    private func start() {
        do {
            for number in [SIGINT, SIGTERM] {
                signals.append(try SignalWatcher(loop: loop, signal: number) { [unowned self] in
                    self.finish(self.sawError ? 1 : 0)
                })
            }
        } catch {
            Output.complain("cannot watch signals: \(error)")
            status = 1
            return
        }
        connect()
    }

    /// Connects to the walk's next address; a failure moves on to the one after, and
    /// only when none is left is it reported, naming the first.
    private func connect() {
        let completion: (Result<any ByteStream, ClientDriver.ConnectFailure>) -> Void = { [unowned self] result in
            switch result {
            case .failure(let error):
                self.connectFailed("\(error)")
            case .success(let connection):
                self.connected(connection)
            }
        }
        if let problem = ClientDriver.open(walk.advance(), loop: loop, trust: trust, completion: completion) { connectFailed(problem) }
    }

    private func connectFailed(_ reason: String) {
        guard !finished else { return }
        switch walk.failed(reason) {
        case .tryNext:
            connect()
        case .roundFailed(let first):
            Output.complain(walk.endpoints.count == 1 ? "cannot connect to \(endpoint): \(reason)"
                                                      : "cannot connect to any address, the first was \(first)")
            finish(1)
        }
    }

    private func connected(_ connection: any ByteStream) {
        guard !finished else {
            connection.close()
            return
        }
        self.connection = connection
        connection.onRead = { [unowned self] bytes in self.received(bytes) }
        connection.onEnd = { [unowned self] end in
            switch end {
            case .eof:
                self.finish(self.sawError ? 1 : 0)
            case .error(let error):
                Output.complain("lost the connection to \(self.endpoint): \(error)")
                self.finish(1)
            }
        }
        connection.startReading()
        if prelude.isEmpty {
            sendUserLines()
        } else {
            connection.write([Array(prelude.map { $0 + "\n" }.joined().utf8)])
        }
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        framer.append(bytes)
        var printed = false
        while !finished, let frame = framer.next() {
            guard case .line(let raw) = frame else {
                Output.complain("the daemon sent a line over \(framer.maxLineBytes) bytes")
                finish(1)
                return
            }
            let line = String(decoding: raw, as: UTF8.self)
            if preludeLeft > 0 {
                preludeDone(line)
                continue
            }
            if case .error(let error) = ServerLine.parse(line) {
                if !sawError, let hint = OneShot.hint(for: error) { Output.complain(hint) }
                sawError = true
            }
            if !Output.outFromNetwork(line + "\n") {
                finish(sawError ? 1 : 0)
                return
            }
            printed = true
        }
        if printed && prompting && input != nil { prompt() }
    }

    /// One answer to `AUTH` or `JOIN`.
    private func preludeDone(_ line: String) {
        preludeLeft -= 1
        if case .error(let error) = ServerLine.parse(line) {
            let answersAuth = prelude.count - preludeLeft - 1 == 0 && prelude[0].hasPrefix("AUTH ")
            Output.err(error.line)
            // A token for a daemon that wants none is worth saying, not worth stopping for.
            if !(answersAuth && error.code == ErrorCode.badArgs.rawValue) {
                if let hint = OneShot.hint(for: error) { Output.complain(hint) }
                finish(1)
                return
            }
        }
        if preludeLeft == 0 { sendUserLines() }
    }

    private func sendUserLines() {
        guard let connection else { return }
        if let lines {
            connection.write([Array(lines.map { $0 + "\n" }.joined().utf8)])
            connection.shutdownWrite()
            return
        }
        do {
            input = try FDPoll(loop: loop, fd: 0) { [unowned self] in self.stdinReadable() }
            if prompting {
                Output.err("navsync: talking to \(endpoint); one command per line (HELP lists them), Ctrl-D ends")
                prompt()
            }
        } catch {
            // A regular file cannot be polled; it can be read straight away without waiting on anyone.
            connection.write([readAllOfStdin()])
            connection.shutdownWrite()
        }
    }

    private func stdinReadable() {
        guard let connection else { return }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n > 0 {
                connection.write([Array(buffer[..<n])])
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            // End of input (or an unreadable stdin): the daemon answers what it has and closes.
            input?.close()
            input = nil
            connection.shutdownWrite()
            return
        }
    }

    private func readAllOfStdin() -> [UInt8] {
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n > 0 { all += buffer[..<n]; continue }
            if n < 0 && errno == EINTR { continue }
            return all
        }
    }

    private func prompt() {
        _ = Output.errRaw("navsync> ")
    }

    private func finish(_ code: Int32) {
        guard !finished else { return }
        finished = true
        status = code
        if prompting && input != nil { _ = Output.errRaw("\n") }
        input?.close()
        input = nil
        for watcher in signals { watcher.close() }
        signals.removeAll()
        connection?.close()
        connection = nil
        loop.stop()
    }
}
