import NavSyncCore
import Glibc
import UVLoop

/// A TLS connection over another byte stream (a libuv one in the daemon
/// and the clients): an adapter that reads ciphertext from the stream below,
/// hands plaintext up through `onRead`, takes plaintext in `write` and
/// sends the records. Above it, the line protocol, HTTP and WebSocket work
/// as on a plain stream; below it, the stream never blocks (the engine's
/// memory BIOs are fed as bytes arrive).
///
/// Life: `beginHandshake` starts reading and arms the handshake bound; then
/// exactly one of `onEstablished` or `onHandshakeFailed` is called (the
/// latter after the stream was closed). Only after `onEstablished` do
/// `onRead` and `onEnd` speak.
///
/// Output written before the handshake finished waits as plaintext and is
/// counted in `queuedWriteBytes`; once established, plaintext is encrypted
/// at once and only ciphertext waits, in the stream's own queue, so the
/// queued figure a server's output budget watches is the bytes that have
/// not reached the kernel, as on a plain stream.
/// Must be used on the loop thread only.
public final class TLSStream: ByteStream {
    private let transport: any ByteStream
    private let engine: TLSEngine
    private let loop: EventLoop
    private var handshakeTimer: LoopTimer?
    /// Plaintext written before the handshake finished.
    private var early: [[UInt8]] = []
    private var earlyBytes = 0
    /// Plaintext decrypted while nobody was reading; handed on at `startReading`.
    private var unread: [UInt8] = []
    private var deliveryTimer: LoopTimer?
    private var reading = false
    private var finished = false

    public var onRead: ((UnsafeRawBufferPointer) -> Void)?
    public var onEnd: ((StreamEnd) -> Void)?
    public var onWriteQueueDrained: (() -> Void)?
    public var onEstablished: (() -> Void)?
    /// The one-line reason; the stream is already closed when this is called.
    public var onHandshakeFailed: ((String) -> Void)?
    /// Why the connection failed after the handshake (a bad record), for a report.
    public private(set) var failureReason: String?

    public init(transport: any ByteStream, engine: TLSEngine, loop: EventLoop) {
        self.transport = transport
        self.engine = engine
        self.loop = loop
    }

    public var peerDescription: String { transport.peerDescription }
    public var peerAddress: PeerAddress { transport.peerAddress }
    public var isClosed: Bool { transport.isClosed }
    public var isEncrypted: Bool { true }
    public var isEstablished: Bool { engine.state == .established || engine.state == .peerClosed }
    public var protocolVersion: String { engine.protocolVersion }

    public var queuedWriteBytes: Int { transport.queuedWriteBytes + earlyBytes }
    public var queuedWriteMemory: Int { transport.queuedWriteMemory + earlyBytes }
    /// Every queued byte is ciphertext made for this connection alone.
    public var queuedOwnMemory: Int { queuedWriteMemory }

    /// Starts the handshake; it must finish within `timeoutMilliseconds`.
    public func beginHandshake(timeoutMilliseconds: UInt64) {
        transport.onRead = { [unowned self] bytes in self.received(bytes) }
        transport.onEnd = { [unowned self] end in self.transportEnded(end) }
        transport.onWriteQueueDrained = { [unowned self] in self.onWriteQueueDrained?() }
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: timeoutMilliseconds) { [unowned self] in
            self.handshakeFailed("the handshake did not finish within \(timeoutMilliseconds / 1000) s")
        }
        handshakeTimer = timer
        sendOutgoing()
        if !transport.isClosed { transport.startReading() }
    }

    private func received(_ ciphertext: UnsafeRawBufferPointer) {
        let wasHandshaking = engine.state == .handshaking
        let plaintext = engine.receive(ciphertext)
        sendOutgoing()
        switch engine.state {
        case .handshaking:
            return
        case .failed(let reason):
            if wasHandshaking {
                handshakeFailed(reason)
            } else {
                failureReason = reason
                transport.stopReading()
                // From a loop callback already, as the stream's own onEnd would be.
                onEnd?(.error(UVError(code: -EPROTO)))
            }
            return
        case .established, .peerClosed:
            break
        }
        if wasHandshaking {
            handshakeTimer?.close()
            handshakeTimer = nil
            flushEarly()
            // Either callback may hold this stream (a client's does, until
            // someone takes it): both go once one has run.
            let established = onEstablished
            onEstablished = nil
            onHandshakeFailed = nil
            established?()
            if transport.isClosed { return }
            // Whoever took the stream decides whether reading goes on.
            if !reading { transport.stopReading() }
        }
        deliver(plaintext)
        if engine.state == .peerClosed && !finished {
            finished = true
            transport.stopReading()
            onEnd?(.eof)
        }
    }

    private func deliver(_ plaintext: [UInt8]) {
        guard !plaintext.isEmpty, !transport.isClosed else { return }
        if reading, unread.isEmpty, let onRead {
            plaintext.withUnsafeBytes { onRead($0) }
        } else {
            unread.append(contentsOf: plaintext)
            if reading { scheduleUnreadDelivery() }
        }
    }

    private func transportEnded(_ end: StreamEnd) {
        if engine.state == .handshaking {
            switch end {
            case .eof: handshakeFailed("the peer closed the connection during the handshake")
            case .error(let error): handshakeFailed(error.description)
            }
            return
        }
        if case .eof = end {
            // Already reported when the close_notify came.
            if finished { return }
            finished = true
        }
        onEnd?(end)
    }

    private func handshakeFailed(_ reason: String) {
        guard !transport.isClosed else { return }
        // The alert OpenSSL wrote says why to a peer that listens; best effort.
        let alert = engine.takeOutgoing()
        if !alert.isEmpty { _ = transport.writeWithoutQueuing([alert]) }
        let report = onHandshakeFailed
        close()
        report?(reason)
    }

    private func sendOutgoing() {
        guard engine.outgoingCount > 0, !transport.isClosed else { return }
        transport.write([engine.takeOutgoing()])
    }

    private func flushEarly() {
        guard !early.isEmpty else { return }
        let chunks = early
        early = []
        earlyBytes = 0
        write(chunks)
    }

    public func startReading() {
        reading = true
        guard !transport.isClosed else { return }
        if !unread.isEmpty { scheduleUnreadDelivery() }
        if engine.state != .peerClosed { transport.startReading() }
    }

    public func stopReading() {
        reading = false
        // The handshake reads whatever the reader wants.
        if isEstablished { transport.stopReading() }
    }

    /// Held plaintext goes up from a later loop callback, never from inside `startReading`.
    private func scheduleUnreadDelivery() {
        let timer = deliveryTimer ?? LoopTimer(loop: loop)
        deliveryTimer = timer
        timer.start(afterMilliseconds: 0) { [unowned self] in
            guard self.reading, !self.unread.isEmpty, let onRead = self.onRead else { return }
            let bytes = self.unread
            self.unread = []
            bytes.withUnsafeBytes { onRead($0) }
        }
    }

    public func write(_ chunks: [[UInt8]]) {
        guard !transport.isClosed else { return }
        guard isEstablished else {
            early += chunks
            earlyBytes += chunks.reduce(0) { $0 + $1.count }
            return
        }
        seal(chunks)
        sendOutgoing()
    }

    /// Encrypts every chunk; the records then go to the kernel with what it
    /// takes at once, the rest queued in the stream (counted there). It
    /// takes everything, as a transport that frames on its own does.
    public func writeWithoutQueuing(_ chunks: [[UInt8]]) -> Int {
        let total = chunks.reduce(0) { $0 + $1.count }
        guard !transport.isClosed else { return total }
        guard isEstablished, transport.queuedWriteBytes == 0 else {
            write(chunks)
            return total
        }
        seal(chunks)
        offerSealed()
        return total
    }

    /// The records just sealed go to the kernel with what it takes at once,
    /// straight from the engine's buffer; the rest is queued.
    private func offerSealed() {
        guard !transport.isClosed else { return }
        let rest = engine.offerOutgoing { [transport] records in transport.writeWithoutQueuing(borrowing: records) }
        if !rest.isEmpty { transport.write([rest]) }
    }

    /// Small chunks (one line each) are joined so that they share records.
    private func seal(_ chunks: [[UInt8]]) {
        if chunks.count == 1 {
            engine.send(chunks[0])
            return
        }
        var joined: [UInt8] = []
        joined.reserveCapacity(chunks.reduce(0) { $0 + $1.count })
        for chunk in chunks { joined += chunk }
        engine.send(joined)
    }

    /// Says close_notify after what is queued, then half-closes.
    public func shutdownWrite() {
        guard !transport.isClosed else { return }
        if isEstablished {
            engine.finish()
            sendOutgoing()
        }
        transport.shutdownWrite()
    }

    public func close() {
        guard !transport.isClosed else { return }
        transport.onRead = nil
        transport.onEnd = nil
        transport.onWriteQueueDrained = nil
        transport.close()
        handshakeTimer?.close()
        handshakeTimer = nil
        deliveryTimer?.close()
        deliveryTimer = nil
        engine.release()
        early = []
        earlyBytes = 0
        unread = []
        onRead = nil
        onEnd = nil
        onWriteQueueDrained = nil
        onEstablished = nil
        onHandshakeFailed = nil
    }
}

extension TLSStream {
    /// Records are this connection's own, the plaintext need not be: a
    /// shared turn is sealed straight from its buffer, with no copy per watcher.
    public func write(shared bytes: SharedBytes) {
        guard !transport.isClosed else { return }
        guard isEstablished else {
            write([bytes.array])
            return
        }
        engine.send(bytes.bytes)
        // A room's turn, once per watcher: no array of records per watcher.
        offerSealed()
    }

    /// The same as `write(shared:)`, which already offers the records to
    /// the kernel first and queues only what it leaves: TLS takes everything.
    public func writeWithoutQueuing(shared bytes: SharedBytes) -> Int {
        write(shared: bytes)
        return bytes.count
    }
}
