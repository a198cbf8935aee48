import NavSyncCore
import UVLoop

/// One connection's way through the front door, as a layer of its byte
/// stream: it sits on the stream below (a libuv stream, or TLS over one)
/// and is a `ByteStream` to the link above, which sees lines and writes
/// lines whatever the client speaks.
///
/// The first line decides for good:
/// - the line protocol: the first bytes go up unchanged and the door
///   `speaksLineProtocol`; the link above then takes `lower` as its stream
///   and drops the door (the fast path passes no layer of the web's);
/// - HTTP: a `WebExchange` answers requests on the stream below and
///   nothing goes up; after a WebSocket upgrade, each text message's lines
///   go up, and lines written from above go down as text frames (a room's
///   shared turn as frames shared by every watcher).
///
/// Until the sniff has decided, writes pass through unchanged (a refusal at
/// accept, `ERR busy`). Once it chose HTTP, the exchange is handed at most
/// `inputBytesPerTurn` of input per loop turn, as the link hands the hub
/// lines: the rest of a read waits here, with reading stopped, for the
/// next turns, so a client pipelining requests cannot hold the loop.
/// After `shutdownWrite` (the link is closing) input still goes up, and
/// the link discards it; none reaches the exchange.
/// Owned by the link above; owns the exchange. Must be used on the loop thread only.
public final class ConnectionDoor: ByteStream {
    /// The stream this door reads and writes.
    public let lower: any ByteStream
    private let door: WebFrontDoor
    /// Released at `close`: the port holds the session, which holds the link above.
    private var hub: (any WebHubPort)?
    private let loop: EventLoop
    /// Judges the first line; nil once it has.
    private var sniffer: ProtocolSniffer? = ProtocolSniffer()
    /// Set when the first line was an HTTP request line.
    private var web: WebExchange?
    /// The layer above wants input (`startReading`).
    private var readingWanted = false
    /// The exchange holds reading back until its responses drain.
    private var heldForDrain = false
    /// `shutdownWrite` was called: the connection is closing.
    private var closing = false
    /// Input read past this turn's share, for the exchange at the next turns.
    private var heldInput: [UInt8] = []
    /// Hands on a share of `heldInput` at the next loop turn.
    private var turnTimer: LoopTimer?

    /// What the exchange is handed per loop turn: the link's share for lines.
    public static let inputBytesPerTurn = 4 * 1024

    public var onRead: ((UnsafeRawBufferPointer) -> Void)?
    public var onEnd: ((StreamEnd) -> Void)?
    public var onWriteQueueDrained: (() -> Void)?

    public init(over lower: any ByteStream, door: WebFrontDoor, hub: any WebHubPort, loop: EventLoop) {
        self.lower = lower
        self.door = door
        self.hub = hub
        self.loop = loop
        lower.onRead = { [unowned self] bytes in self.lowerRead(bytes) }
        lower.onEnd = { [unowned self] end in self.lowerEnded(end) }
        lower.onWriteQueueDrained = { [unowned self] in self.lowerDrained() }
    }

    /// True once the first line chose the line protocol: the door has
    /// nothing more to do, and the layer above should read and write
    /// `lower` itself (taking over its callbacks).
    public private(set) var speaksLineProtocol = false

    /// True once the first line chose HTTP.
    public var carriesWeb: Bool { web != nil }

    // MARK: Input (up)

    private func lowerRead(_ bytes: UnsafeRawBufferPointer) {
        if closing || speaksLineProtocol {
            onRead?(bytes)
        } else if let web {
            feed(web, bytes)
        } else {
            sniff(bytes)
        }
    }

    private func sniff(_ bytes: UnsafeRawBufferPointer) {
        // A connection refused at accept (busy) is not served.
        guard hub?.sessionEnd == nil, var sniffer else { return }
        let verdict = sniffer.feed(bytes)
        self.sniffer = sniffer
        switch verdict {
        case .undecided:
            return
        case .lineProtocol:
            let first = sniffer.takeBytes()
            self.sniffer = nil
            speaksLineProtocol = true
            passUp(first)
        case .http, .requestLineTooLong:
            // A request line over 8 KiB is refused by the exchange's parser (414).
            let first = sniffer.takeBytes()
            self.sniffer = nil
            guard let hub else { return }
            let exchange = WebExchange(door: door, hub: hub, connection: self, loop: loop)
            web = exchange
            first.withUnsafeBytes { feed(exchange, $0) }
        }
    }

    /// This turn's share of a read goes to the exchange; the rest is held.
    private func feed(_ web: WebExchange, _ bytes: UnsafeRawBufferPointer) {
        // A layer below may hand on what it had already read (TLS) after reading stopped.
        guard heldInput.isEmpty else {
            heldInput.append(contentsOf: bytes)
            return
        }
        let share = min(bytes.count, Self.inputBytesPerTurn)
        web.received(UnsafeRawBufferPointer(rebasing: bytes[..<share]))
        guard share < bytes.count, !closing, self.web != nil, !lower.isClosed else { return }
        heldInput.append(contentsOf: bytes[share...])
        lower.stopReading()
        scheduleHeldShare()
    }

    private func scheduleHeldShare() {
        let timer = turnTimer ?? LoopTimer(loop: loop)
        turnTimer = timer
        timer.start(afterMilliseconds: 0) { [unowned self] in self.passHeldShare() }
    }

    /// At a later loop turn: the next share of the held input.
    private func passHeldShare() {
        guard let web, !closing, !lower.isClosed else {
            heldInput = []
            return
        }
        let share = min(heldInput.count, Self.inputBytesPerTurn)
        let chunk = Array(heldInput[..<share])
        heldInput.removeFirst(share)
        web.received(chunk)
        if !heldInput.isEmpty {
            scheduleHeldShare()
        } else if readingWanted && !heldForDrain && !closing && !lower.isClosed {
            lower.startReading()
        }
    }

    /// Bytes for the layer above: the first line of the line protocol, or a
    /// WebSocket message's lines.
    func passUp(_ bytes: [UInt8]) {
        guard !bytes.isEmpty, let onRead else { return }
        bytes.withUnsafeBytes { onRead($0) }
    }

    private func lowerEnded(_ end: StreamEnd) {
        // At end of input, a first line still being judged (an unterminated
        // `GET`) is the line protocol's: it runs like any last line.
        if case .eof = end, var sniffer, !closing {
            self.sniffer = nil
            speaksLineProtocol = true
            passUp(sniffer.takeBytes())
        }
        onEnd?(end)
    }

    private func lowerDrained() {
        onWriteQueueDrained?()
        web?.writeQueueDrained()
    }

    public func startReading() {
        readingWanted = true
        if !heldForDrain && heldInput.isEmpty { lower.startReading() }
    }

    public func stopReading() {
        readingWanted = false
        lower.stopReading()
    }

    /// The exchange has queued more than `--max-pending`: no more requests
    /// are read until the stream below drains.
    func holdReadingUntilDrained() {
        heldForDrain = true
        lower.stopReading()
    }

    /// The responses drained; reading goes on if the layer above wants it.
    func releaseReading() {
        heldForDrain = false
        if readingWanted && heldInput.isEmpty && !lower.isClosed { lower.startReading() }
    }

    // MARK: Output (down)

    /// Bytes the door formatted or framed itself (responses, control frames).
    func writeDown(_ bytes: [UInt8]) { lower.write([bytes]) }

    /// Frames every WebSocket watcher of a room writes: a reference, not a copy, where the stream below can hold one.
    func writeDown(shared bytes: SharedBytes) { lower.write(shared: bytes) }

    public func write(_ chunks: [[UInt8]]) {
        if let web {
            web.send(chunks)
        } else {
            lower.write(chunks)
        }
    }

    public func write(shared bytes: SharedBytes) {
        if let web {
            web.send(shared: bytes)
        } else {
            lower.write(shared: bytes)
        }
    }

    public func writeWithoutQueuing(_ chunks: [[UInt8]]) -> Int {
        guard let web else { return lower.writeWithoutQueuing(chunks) }
        // A WebSocket frames each line on its own: it takes everything.
        web.send(chunks)
        return chunks.reduce(0) { $0 + $1.count }
    }

    public func writeWithoutQueuing(shared bytes: SharedBytes) -> Int {
        guard let web else { return lower.writeWithoutQueuing(shared: bytes) }
        web.send(shared: bytes)
        return bytes.count
    }

    /// The session is ending: a WebSocket gets its close frame (after the
    /// lines already sent, such as `BYE`), then the stream below half-closes.
    public func shutdownWrite() {
        if !closing {
            closing = true
            web?.closing(because: hub?.sessionEnd)
        }
        lower.shutdownWrite()
    }

    /// The one teardown: the exchange stops, the stream below closes, and
    /// the port (which holds the session) is let go.
    public func close() {
        web?.closed()
        web = nil
        sniffer = nil
        heldInput = []
        turnTimer?.close()
        turnTimer = nil
        hub = nil
        onRead = nil
        onEnd = nil
        onWriteQueueDrained = nil
        lower.onRead = nil
        lower.onEnd = nil
        lower.onWriteQueueDrained = nil
        lower.close()
    }

    // MARK: What the stream below says

    public var peerDescription: String { lower.peerDescription }
    public var peerAddress: PeerAddress { lower.peerAddress }
    public var isClosed: Bool { lower.isClosed }
    public var isEncrypted: Bool { lower.isEncrypted }
    public var queuedWriteBytes: Int { lower.queuedWriteBytes }
    public var queuedWriteMemory: Int { lower.queuedWriteMemory }
    public var queuedOwnMemory: Int { lower.queuedOwnMemory }
}
