import Glibc
import NavSyncCore
import NavSyncBackplane
import NavSyncServer
import NavSyncTLS
import NavSyncWeb
import UVLoop

/// The daemon's moving parts around the server: listeners, the set of open
/// links, signal handling and the bounded shutdown.
/// Must be used on the loop thread only.
final class Daemon {
    /// SIGINT/SIGTERM must end the process within a second; lingering
    /// clients get this long to take their `BYE`.
    static let shutdownGraceMilliseconds: UInt64 = 600

    private let loop: EventLoop
    private let server: Server
    private let log: Logger
    private let screensPath: String?
    private let door: WebFrontDoor
    private var listeners: [StreamListener] = []
    private var links: [ObjectIdentifier: ClientLink] = [:]
    private var signals: [SignalWatcher] = []
    private var stopping = false
    private let turns = LoopTurns()
    /// TLS connections still shaking hands: no session, no link yet. Each
    /// has a bounded life (the handshake bound) and counts as a client.
    /// Keyed by a number of the daemon's, given before the stream exists.
    private var handshakes: [UInt64: TLSStream] = [:]
    private var nextHandshake: UInt64 = 0
    /// `--max-handshakes` and each address's share of it.
    private var handshakeSlots: HandshakeSlots
    /// TLS connections closed for `--max-handshakes`: refused for
    /// their address's share, or the oldest closed to make room.
    private var handshakesRefused: UInt64 = 0
    /// Writes the connection log's summary when its second ends.
    private lazy var connectionLogTimer = LoopTimer(loop: loop)
    /// The certificate and key new TLS connections get; SIGHUP replaces it.
    private var tlsContext: TLSServerContext?
    private let maxClients: Int
    /// A TLS handshake not finished this long after accepting is given up.
    static let tlsHandshakeMilliseconds: UInt64 = 10_000
    /// Links holding input beyond their share of a turn.
    private var holding: [ClientLink] = []
    /// Started with no delay while links hold input, so the loop polls
    /// without blocking and comes back for them.
    private lazy var wake = LoopTimer(loop: loop)
    /// Returns what bursts of handshakes and disconnects leave free in the heap.
    private let heapTrimmer: HeapTrimmer

    /// Seconds of silence before TCP keepalive probes a connection; 0 = off.
    private let keepaliveSeconds: Int
    /// The fleet's store when the rooms live in Redis: a reload goes through it.
    private let backplane: RedisRoomStore?
    /// The grants file, read again on SIGHUP; nil: no token.
    var grantsSource: GrantsSource?
    /// `--token-keys`, read again on SIGHUP; nil: no signed tokens.
    var signedTokenKeys: SignedTokenKeys?

    init(loop: EventLoop, server: Server, log: Logger, screensPath: String?, door: WebFrontDoor, keepaliveSeconds: Int,
         maxClients: Int, maxHandshakes: Int, tlsContext: TLSServerContext? = nil, backplane: RedisRoomStore? = nil) {
        self.backplane = backplane
        self.handshakeSlots = HandshakeSlots(capacity: maxHandshakes)
        self.maxClients = maxClients
        self.tlsContext = tlsContext
        self.loop = loop
        self.heapTrimmer = HeapTrimmer(loop: loop)
        self.door = door
        self.server = server
        self.log = log
        self.screensPath = screensPath
        self.keepaliveSeconds = keepaliveSeconds
        server.connectionLog.scheduleSummary = { [unowned self] after, write in
            self.connectionLogTimer.start(afterMilliseconds: after) { write() }
        }
        server.addFigures { [unowned self] in
            [.counter("tls_handshakes_refused", self.handshakesRefused,
                      help: "TLS connections closed for --max-handshakes: over their address's share, or the oldest handshake making room."),
             .counter("heap_trims", self.heapTrimmer.trims,
                      help: "Times freed heap pages went back to the kernel after a burst of connections came or went."),
             .counter("heap_trim_microseconds", self.heapTrimmer.trimMicroseconds,
                      help: "Loop time spent handing those pages back.")]
        }
    }

    /// Binds every listener first and only then logs the `listening on`
    /// lines, so a script waiting for them never goes ahead against a daemon
    /// that is about to exit because a later address was taken.
    func listen(_ addresses: [HostPort], tls tlsAddresses: [HostPort] = [], unixPath: String?) throws(DaemonStartError) {
        var tlsListeners: [StreamListener] = []
        for (address, overTLS) in addresses.map({ ($0, false) }) + tlsAddresses.map({ ($0, true) }) {
            let shown = (overTLS ? "tls://" : "") + address.description
            do {
                let listener = try StreamListener.tcp(loop: loop, host: address.host, port: address.port) { [unowned self] stream in
                    if overTLS { self.adoptTLS(stream) } else { self.adopt(stream) }
                }
                if overTLS { tlsListeners.append(listener) } else { listeners.append(listener) }
            } catch {
                let reason = error.isAddressInUse ? "address already in use" : error.description
                throw DaemonStartError("cannot listen on \(shown): \(reason)")
            }
        }
        if let unixPath {
            do {
                let listener = try StreamListener.unix(loop: loop, path: unixPath) { [unowned self] stream in
                    self.adopt(stream)
                }
                listeners.append(listener)
            } catch {
                var reason = error.isAddressInUse ? "address already in use" : error.description
                // bind(2) says EADDRINUSE for any file in the way; a regular file is a mistake, not a rival daemon.
                var info = stat()
                if lstat(unixPath, &info) == 0, info.st_mode & S_IFMT != S_IFSOCK {
                    reason = "\(unixPath) exists and is not a socket"
                }
                throw DaemonStartError("cannot listen on unix:\(unixPath): \(reason)")
            }
        }
        for listener in listeners {
            StderrLog.always("listening on \(listener.boundAddress)")
            // Every TCP listener also serves the web client.
            if !listener.boundAddress.hasPrefix("unix:") {
                StderrLog.always("web client at http://\(listener.boundAddress)/")
            }
        }
        for listener in tlsListeners {
            StderrLog.always("listening on tls://\(listener.boundAddress)")
            StderrLog.always("web client at https://\(listener.boundAddress)/")
        }
        listeners += tlsListeners
    }

    private func adopt(_ stream: StreamConnection) {
        guard !stopping else {
            stream.close()
            return
        }
        prepare(stream)
        startLink(on: stream)
    }

    private func prepare(_ stream: StreamConnection) {
        stream.setNoDelay(true)
        if keepaliveSeconds > 0, let error = stream.setKeepAlive(seconds: keepaliveSeconds) {
            log.warn("cannot turn on TCP keepalive for \(stream.peerDescription): \(error)")
        }
    }

    /// A connection on a TLS listener shakes hands first; only then does it
    /// get a link and a session, so the hub and the front door see its
    /// plaintext as they see any stream. Over --max-clients it is closed
    /// before the handshake: no `ERR busy` can be said without one, and
    /// refusing costs no cryptography.
    private func adoptTLS(_ stream: StreamConnection) {
        guard !stopping, let tlsContext else {
            stream.close()
            return
        }
        let peer = stream.peerDescription
        let connectionLog = server.connectionLog
        guard links.count + handshakes.count < maxClients else {
            connectionLog.closed("tls \(peer) refused before the handshake: \(maxClients) connections already open", level: .warn)
            stream.close()
            return
        }
        // A slot first, before any cryptography.
        let key = nextHandshake
        nextHandshake += 1
        switch handshakeSlots.admit(key, from: stream.peerAddress) {
        case .refused:
            handshakesRefused += 1
            connectionLog.closed("tls \(peer) refused before the handshake: its address has "
                                 + "\(handshakeSlots.perAddress) handshakes in progress")
            stream.close()
            return
        case .admitted(let evicting):
            if let evicting, let oldest = handshakes.removeValue(forKey: evicting) {
                handshakesRefused += 1
                connectionLog.closed("tls \(oldest.peerDescription): handshake closed unfinished to make room: "
                                     + "\(handshakeSlots.capacity) in progress (--max-handshakes)")
                oldest.close()
            }
        }
        let engine: TLSEngine
        do {
            engine = try TLSEngine(server: tlsContext)
        } catch {
            handshakeSlots.finished(key)
            log.error("tls \(peer): \(error)")
            stream.close()
            return
        }
        prepare(stream)
        let tls = TLSStream(transport: stream, engine: engine, loop: loop)
        handshakes[key] = tls
        tls.onEstablished = { [unowned self, unowned tls] in
            self.handshakes[key] = nil
            self.handshakeSlots.finished(key)
            self.heapTrimmer.connectionChanged()
            self.log.debug("tls \(peer): \(tls.protocolVersion) handshake done")
            self.startLink(on: tls)
        }
        tls.onHandshakeFailed = { [unowned self] reason in
            self.handshakes[key] = nil
            self.handshakeSlots.finished(key)
            self.heapTrimmer.connectionChanged()
            connectionLog.closed("tls \(peer): handshake failed: \(reason)")
        }
        tls.beginHandshake(timeoutMilliseconds: Self.tlsHandshakeMilliseconds)
    }

    private func startLink(on stream: any ByteStream) {
        let link = ClientLink(stream: stream, loop: loop, turns: turns, liveCount: server.liveLinks, door: door,
                              onHolding: { [unowned self] link in self.holding.append(link) },
                              onClosed: { [unowned self] link in
                                  self.links[ObjectIdentifier(link)] = nil
                                  self.heapTrimmer.connectionChanged()
                              })
        links[ObjectIdentifier(link)] = link
        link.attach(to: server)
    }

    /// Runs once per loop turn, before the loop waits for IO: a new turn of
    /// input shares, held input passed on, then the server's flush.
    func beforeBlocking() {
        turns.advance()
        if !holding.isEmpty {
            let waiting = holding
            holding.removeAll()
            for link in waiting where link.takeHeldInput() {
                holding.append(link)
            }
        }
        server.flush()
        if !holding.isEmpty || server.hasHeldLinesReadyToRun {
            wake.start(afterMilliseconds: 0) {}
        }
    }

    func installSignalHandlers() {
        do {
            for signal in [SIGINT, SIGTERM] {
                let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
                signals.append(try SignalWatcher(loop: loop, signal: signal) { [unowned self] in self.stop(because: name) })
            }
            signals.append(try SignalWatcher(loop: loop, signal: SIGHUP) { [unowned self] in
                self.reloadCatalog()
                self.reloadGrants()
                self.signedTokenKeys?.reload()
                self.reloadCertificate()
            })
        } catch {
            log.error("cannot install signal handlers: \(error)")
        }
    }

    /// New TLS connections get the certificate and key as the files now
    /// are (a renewed certificate); open ones keep what they shook hands with.
    /// A pair that cannot be loaded, or does not match, keeps the old.
    private func reloadCertificate() {
        guard let current = tlsContext else { return }
        if let warning = SecretFile.exposureWarning(current.keyFile, holding: "TLS key") { log.warn("SIGHUP: \(warning)") }
        do {
            tlsContext = try TLSServerContext(certificateFile: current.certificateFile, keyFile: current.keyFile)
            log.info("SIGHUP: TLS certificate and key reloaded from \(current.certificateFile) and \(current.keyFile)")
        } catch {
            log.error("SIGHUP: kept the old TLS certificate: \(error)")
        }
    }

    private func reloadCatalog() {
        guard let screensPath else {
            log.info("SIGHUP: no --screens file; the built-in catalog stays")
            return
        }
        do {
            let catalog = try loadCatalog(screensPath)
            if let backplane {
                // The fleet's rules are a lone daemon's: a changed initial is refused here.
                guard catalog.initial == server.catalog.initial else {
                    log.error("SIGHUP: kept the old catalog: \(screensPath) changes initial from \(server.catalog.initial) to \(catalog.initial)")
                    return
                }
                // Every daemon of the fleet, this one included, adopts it from Redis.
                backplane.publishCatalog(catalog) { [log] problem in
                    if let problem {
                        log.error("SIGHUP: kept the old catalog: the fleet's could not be replaced: \(problem)")
                    } else {
                        log.info("SIGHUP: catalog from \(screensPath) stored as the fleet's (\(catalog.screens.count) screens)")
                    }
                }
                return
            }
            switch try server.reload(catalog: catalog) {
            case .unchanged:
                log.info("SIGHUP: catalog in \(screensPath) is unchanged")
            case .changed(let watchersTold):
                log.info("SIGHUP: catalog reloaded from \(screensPath) (\(server.catalog.screens.count) screens); "
                         + "CATALOG sent to \(watchersTold) watchers")
            }
        } catch {
            log.error("SIGHUP: kept the old catalog: \(error)")
        }
    }

    /// Revoked tokens are closed, changed grants apply at once; a file
    /// that cannot be read or parsed keeps the old grants.
    private func reloadGrants() {
        guard let grantsSource else { return }
        if let warning = grantsSource.exposureWarning { log.warn("SIGHUP: \(warning)") }
        do {
            let grants = try grantsSource.load()
            let outcome = server.reload(grants: grants)
            log.info("SIGHUP: \(grants.count) grants reloaded from \(grantsSource.path); "
                     + "\(outcome.revoked) connections closed (token revoked), \(outcome.changed) given a changed grant")
        } catch {
            log.error("SIGHUP: kept the old grants: \(error)")
        }
    }

    /// Stops accepting, says BYE to everyone, makes the state durable, and
    /// ends the loop as soon as every link has closed or the grace runs out.
    private func stop(because signal: String) {
        if stopping {
            log.warn("\(signal) again: stopping now")
            loop.stop()
            return
        }
        stopping = true
        log.info("\(signal): stopping")
        for listener in listeners { listener.close() }
        signedTokenKeys?.close()
        listeners.removeAll()
        for handshake in handshakes.values { handshake.close() }
        handshakes.removeAll()
        server.shutdown()
        let deadline = loop.nowMilliseconds + Self.shutdownGraceMilliseconds
        let poll = LoopTimer(loop: loop)
        poll.start(afterMilliseconds: 0, repeatMilliseconds: 10) { [unowned self] in
            if self.links.isEmpty || self.loop.nowMilliseconds >= deadline {
                self.loop.stop()
            }
        }
    }
}
