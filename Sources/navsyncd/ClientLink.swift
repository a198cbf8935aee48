import NavSyncServer
import UVLoop

/// Joins one libuv stream to its server session: bytes and end-of-stream go
/// to the server, the server's output goes to the stream.
/// Must be used on the loop thread only.
final class ClientLink: Connection {
    /// How long a closing connection waits for the peer to close its side.
    static let lingerMilliseconds: UInt64 = 2_000

    private let stream: StreamConnection
    private let loop: EventLoop
    private var lingerTimer: LoopTimer?
    private let onClosed: (ClientLink) -> Void
    /// The peer has finished sending (EOF seen).
    private var peerFinished = false

    init(stream: StreamConnection, loop: EventLoop, onClosed: @escaping (ClientLink) -> Void) {
        self.stream = stream
        self.loop = loop
        self.onClosed = onClosed
    }

    /// Hands the stream to the server and starts reading.
    func attach(to server: Server) {
        let session = server.accept(self)
        stream.onRead = { bytes in server.receive(bytes, from: session) }
        stream.onEnd = { end in
            switch end {
            case .eof:
                self.peerFinished = true
                server.inputEnded(session)
            case .error(let error): server.transportFailed(session, error.name)
            }
        }
        stream.onWriteQueueDrained = { server.writeQueueDrained(session) }
        if !stream.isClosed { stream.startReading() }
    }

    var isClosed: Bool { stream.isClosed }

    // MARK: Connection

    func write(_ chunks: [[UInt8]]) { stream.write(chunks) }

    var queuedWriteBytes: Int { stream.queuedWriteBytes }

    func pauseReading() { stream.stopReading() }

    func resumeReading() { stream.startReading() }

    var peerDescription: String { stream.peerDescription }

    func close() {
        guard !stream.isClosed else { return }
        lingerTimer?.close()
        lingerTimer = nil
        stream.onRead = nil
        stream.onEnd = nil
        stream.onWriteQueueDrained = nil
        stream.close()
        onClosed(self)
    }

    func closeAfterSending() {
        guard !stream.isClosed, lingerTimer == nil else { return }
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: Self.lingerMilliseconds) { [unowned self] in self.close() }
        lingerTimer = timer
        stream.shutdownWrite()
        stream.onWriteQueueDrained = { [unowned self] in
            if self.peerFinished { self.close() }
        }
        stream.onRead = { _ in }
        stream.onEnd = { [unowned self] end in
            self.peerFinished = true
            // Closing with writes still queued would cancel them.
            if case .error = end { self.close() } else { self.closeIfSent() }
        }
        if peerFinished {
            closeIfSent()
        } else {
            stream.startReading()
        }
    }

    private func closeIfSent() {
        if stream.queuedWriteBytes == 0 { close() }
    }
}
