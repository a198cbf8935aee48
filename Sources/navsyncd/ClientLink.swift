import NavSyncCore
import NavSyncServer
import NavSyncTLS
import NavSyncWeb
import UVLoop

/// Joins the top of one connection's byte-stream stack to its server
/// session: lines and end-of-stream go to the server, the server's output
/// goes down the stack. The stack, bottom up: the libuv stream, TLS when
/// the port has it (`TLSStream`), then the front door (`ConnectionDoor`,
/// NavSyncWeb) until the first line has decided, and for good if it was
/// HTTP: a WebSocket's messages come up as lines and lines go down as
/// frames, each layer passed once. Once the first line chose the line
/// protocol the door steps out and the link takes the stream below it.
///
/// Ownership, so that every object of a connection is freed when it closes:
/// the daemon's table of links owns the link, the link owns the top of its
/// stack (each layer owns the one below) and its session (the door's port
/// holds the session too), and the session's reference back to the link is
/// the one cycle, broken in `close()`, the single teardown. `close()`
/// closes the stack, drops the session and the server, and takes the link
/// out of the daemon's table; `liveLinks` counts links not yet freed.
/// Must be used on the loop thread only.
final class ClientLink: Connection {
    /// How long a closing connection waits for the peer to close its side.
    static let lingerMilliseconds: UInt64 = 2_000
    /// Bytes of input one connection may hand the server per loop turn. The
    /// rest is held, with reading paused, for the next turns: without this a
    /// client pipelining GETs as fast as it can held the loop for 100-400 ms
    /// at a time while every other client waited. 4 KiB is about 1,000 of
    /// the shortest commands, a millisecond or two of work; with it the
    /// others waited ~2 ms (median) and the pipeliner lost nothing.
    static let inputBytesPerTurn = 4 * 1024

    /// The top of the stack: the door while it is in it, then the stream below it.
    private var stream: any ByteStream
    private let loop: EventLoop
    private var lingerTimer: LoopTimer?
    private let onClosed: (ClientLink) -> Void
    /// The peer has finished sending (EOF seen).
    private var peerFinished = false
    private let turns: LoopTurns
    /// Called when this link starts holding input for a later turn.
    private let onHolding: (ClientLink) -> Void
    private var server: Server?
    private var session: Session?
    /// Input read but not yet handed to the server (over this turn's share).
    private var heldInput: [UInt8] = []
    private var inputTurn: UInt64 = 0
    private var inputThisTurn = 0
    /// The server asked for reading to pause (its backpressure).
    private var serverPausedReading = false
    /// In the daemon's list of links holding input (`onHolding`).
    private var inHoldingList = false
    private let liveCount: LiveCount
    /// What every web connection of the daemon shares.
    private let door: WebFrontDoor
    /// This connection's way through the front door (the sniff, then HTTP),
    /// while it is the top of the stack; set by `attach`.
    private var passage: ConnectionDoor?

    init(stream: any ByteStream, loop: EventLoop, turns: LoopTurns, liveCount: LiveCount, door: WebFrontDoor,
         onHolding: @escaping (ClientLink) -> Void, onClosed: @escaping (ClientLink) -> Void) {
        self.stream = stream
        self.loop = loop
        self.turns = turns
        self.liveCount = liveCount
        self.door = door
        self.onHolding = onHolding
        self.onClosed = onClosed
        liveCount.increment()
    }

    deinit { liveCount.decrement() }

    /// Hands the stream to the server, puts the front door on top of it and starts reading.
    func attach(to server: Server) {
        let session = server.accept(self)
        self.server = server
        self.session = session
        let port = SessionWebPort(server: server, session: session, peer: stream.peerAddress)
        let passage = ConnectionDoor(over: stream, door: door, hub: port, loop: loop)
        self.passage = passage
        adopt(passage)
        if !stream.isClosed { stream.startReading() }
    }

    /// Makes `top` the stream this link reads and writes, taking its callbacks.
    private func adopt(_ top: any ByteStream) {
        stream = top
        guard let server, let session else { return }
        top.onRead = { [unowned self] bytes in self.received(bytes) }
        top.onEnd = { [unowned self] end in
            switch end {
            case .eof:
                self.peerFinished = true
                server.inputEnded(session)
            case .error(let error): server.transportFailed(session, error.name)
            }
        }
        top.onWriteQueueDrained = { server.writeQueueDrained(session) }
    }

    /// The first line chose the line protocol: the door leaves the stack
    /// (freeing it and its sniff buffer keeps each idle client's memory at
    /// what it was before there was a door), and the line protocol's bytes
    /// pass no layer of the web's.
    private func stepOutOfDoor(_ passage: ConnectionDoor) {
        self.passage = nil
        adopt(passage.lower)
    }

    var isClosed: Bool { stream.isClosed }

    /// Hands the server this turn's share of the bytes; holds the rest and
    /// pauses reading until `takeHeldInput` has passed it all on.
    private func received(_ bytes: UnsafeRawBufferPointer) {
        guard let server, let session else { return }
        if let passage, passage.speaksLineProtocol { stepOutOfDoor(passage) }
        if inputTurn != turns.current {
            inputTurn = turns.current
            inputThisTurn = 0
        }
        let share = min(bytes.count, Self.inputBytesPerTurn - inputThisTurn)
        inputThisTurn += share
        if share > 0 { server.receive(UnsafeRawBufferPointer(rebasing: bytes[..<share]), from: session) }
        guard share < bytes.count, !stream.isClosed else { return }
        heldInput.append(contentsOf: bytes[share...])
        stream.stopReading()
        askForTurns()
    }

    /// Called once per loop turn, before the server's flush, while this link
    /// holds input: passes on this turn's share. Returns true while input is
    /// still held.
    func takeHeldInput() -> Bool {
        inHoldingList = false
        guard let server, let session, !heldInput.isEmpty, !stream.isClosed else {
            heldInput.removeAll()
            return false
        }
        // The server has stopped taking lines until its output drains: the
        // held bytes wait with it, and `resumeReading` hands them on again.
        if serverPausedReading { return false }
        inputTurn = turns.current
        let share = min(heldInput.count, Self.inputBytesPerTurn)
        inputThisTurn = share
        let chunk = heldInput[..<share]
        heldInput.removeFirst(share)
        server.receive(chunk, from: session)
        if !heldInput.isEmpty && !stream.isClosed {
            inHoldingList = true
            return true
        }
        heldInput.removeAll()
        if !serverPausedReading { stream.startReading() }
        return false
    }

    // MARK: Connection

    func write(_ chunks: [[UInt8]]) { stream.write(chunks) }

    func write(shared bytes: SharedBytes) { stream.write(shared: bytes) }

    func writeWithoutQueuing(shared bytes: SharedBytes) -> Int { stream.writeWithoutQueuing(shared: bytes) }

    func writeWithoutQueuing(_ chunks: [[UInt8]]) -> Int { stream.writeWithoutQueuing(chunks) }

    // The memory, not only the bytes: with thousands of stuck watchers the
    // request header of each queued write adds up (see --max-output-memory).
    var queuedWriteBytes: Int { stream.queuedWriteMemory }

    var queuedOwnMemory: Int { stream.queuedOwnMemory }

    func pauseReading() {
        serverPausedReading = true
        stream.stopReading()
    }

    func resumeReading() {
        serverPausedReading = false
        // Held input is passed on first; reading resumes once it is gone.
        if heldInput.isEmpty {
            stream.startReading()
        } else {
            askForTurns()
        }
    }

    /// Joins the daemon's list of links served a share per turn, once.
    private func askForTurns() {
        guard !inHoldingList else { return }
        inHoldingList = true
        onHolding(self)
    }

    var peerDescription: String { stream.peerDescription }

    var peerAddress: PeerAddress { stream.peerAddress }

    /// The one teardown: after it nothing refers to the session from here,
    /// and once the server has let go of it too (it did before calling this,
    /// or does at its next flush) the session, this link and the stream are
    /// freed.
    func close() {
        guard !stream.isClosed else { return }
        lingerTimer?.close()
        lingerTimer = nil
        stream.onRead = nil
        stream.onEnd = nil
        stream.onWriteQueueDrained = nil
        stream.close()
        passage = nil
        heldInput = []
        session = nil
        server = nil
        onClosed(self)
    }

    func closeAfterSending() {
        guard !stream.isClosed, lingerTimer == nil else { return }
        // Input that arrives from here on is discarded; so is any held.
        heldInput.removeAll()
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

/// Counts the loop's turns, so a link can tell when its input share starts afresh.
final class LoopTurns {
    private(set) var current: UInt64 = 0
    func advance() { current &+= 1 }
}
