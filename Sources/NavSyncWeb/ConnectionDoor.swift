import NavSyncCore
import NavSyncServer
import UVLoop

/// One connection's way through the front door. Its first line decides for
/// good: the line protocol goes straight to the hub's session (the caller
/// checks `speaksLineProtocol` and skips this type on that fast path), HTTP
/// goes to a `WebExchange`, which answers requests and, after an upgrade,
/// turns WebSocket messages into the same session's lines.
///
/// The hub never learns which it was: it sees the session and the
/// connection it was given, and the door decides how its lines are carried.
/// Owned by the connection that reads the stream; must be used on the loop thread only.
public final class ConnectionDoor {
    private let door: WebFrontDoor
    private let server: Server
    private let session: Session
    private unowned let stream: any WebByteStream
    private let loop: EventLoop
    /// Judges the first line; nil once it has.
    private var sniffer: ProtocolSniffer? = ProtocolSniffer()
    /// Set when the first line was an HTTP request line.
    private var web: WebExchange?

    public init(door: WebFrontDoor, server: Server, session: Session, stream: any WebByteStream, loop: EventLoop) {
        self.door = door
        self.server = server
        self.session = session
        self.stream = stream
        self.loop = loop
    }

    /// True once the first line chose the line protocol (or the connection
    /// is closed): bytes then go straight to the hub. Stored rather than
    /// computed, so the link's per-read check is one field read across modules.
    public private(set) var speaksLineProtocol = false

    /// True once the first line chose HTTP: the session's output goes through `send`.
    public private(set) var carriesWeb = false

    /// Input while the first line is being judged, or once it chose HTTP.
    public func received(_ bytes: some Collection<UInt8>) {
        if let web {
            web.received(bytes)
        } else {
            sniff(bytes)
        }
    }

    private func sniff(_ bytes: some Collection<UInt8>) {
        // A connection refused at accept (busy) reads nothing.
        guard server.endReason(of: session) == nil, var sniffer else { return }
        let verdict = sniffer.feed(bytes)
        self.sniffer = sniffer
        switch verdict {
        case .undecided:
            return
        case .lineProtocol:
            let first = sniffer.takeBytes()
            self.sniffer = nil
            speaksLineProtocol = true
            server.receive(first, from: session)
        case .http, .requestLineTooLong:
            // A request line over 8 KiB is refused by the exchange's parser (414).
            let first = sniffer.takeBytes()
            self.sniffer = nil
            let exchange = WebExchange(door: door, server: server, session: session, stream: stream, loop: loop)
            web = exchange
            carriesWeb = true
            exchange.received(first)
        }
    }

    /// At end of input, a first line still being judged (an unterminated
    /// `GET`) is the line protocol's: it runs like any last line.
    public func endOfInput() {
        guard var sniffer else { return }
        self.sniffer = nil
        speaksLineProtocol = true
        let first = sniffer.takeBytes()
        if !first.isEmpty { server.receive(first, from: session) }
    }

    /// The session's output on an HTTP connection (see `WebExchange.send`).
    public func send(_ chunks: [[UInt8]]) {
        web?.send(chunks)
    }

    /// A room's turn of events, shared with the other connections of the room.
    public func send(shared bytes: SharedBytes) {
        web?.send(shared: bytes)
    }

    /// The stream has written everything it held.
    public func writeQueueDrained() {
        web?.writeQueueDrained()
    }

    /// The session is ending: a WebSocket gets its close frame.
    public func closing() {
        web?.closing(because: server.endReason(of: session))
    }

    /// The connection is gone.
    public func closed() {
        web?.closed()
        web = nil
        carriesWeb = false
        sniffer = nil
        speaksLineProtocol = true
    }
}
