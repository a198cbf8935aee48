import NavSyncCore

/// What the server needs from a client's byte stream. The daemon adapts a
/// libuv stream to it; tests use an in-memory one, so the hub's logic is
/// exercised without sockets.
///
/// All methods must be called on the loop thread.
public protocol Connection: AnyObject {
    /// Queues the chunks in order as one batch. Never calls back into the
    /// server from inside this call.
    func write(_ chunks: [[UInt8]])
    /// Hands the transport what it takes at once and queues nothing; returns
    /// how many leading bytes it took (all, some or none). Called only while
    /// `queuedWriteBytes` is 0, so the order of output is kept. A transport
    /// that cannot tell (it frames or buffers on its own) takes everything.
    func writeWithoutQueuing(_ chunks: [[UInt8]]) -> Int
    /// Writes a buffer that other connections write too (a room's events of
    /// one turn): as `write([bytes])`, but the transport may keep a
    /// reference to it instead of copying what the socket does not take.
    func write(shared bytes: SharedBytes)
    /// `writeWithoutQueuing` for a shared buffer.
    func writeWithoutQueuing(shared bytes: SharedBytes) -> Int
    /// Bytes handed to `write` that the transport has not yet sent, with what
    /// the transport spends to hold them (0 once everything is sent). Shared
    /// buffers count in full here: this is what the connection holds, for
    /// `--max-pending`.
    var queuedWriteBytes: Int { get }
    /// The memory the transport holds for this connection alone: its
    /// queued writes without the shared buffers they point into, which are
    /// charged once to their `SharedBytesLedger` (0 once everything is sent).
    var queuedOwnMemory: Int { get }
    func pauseReading()
    func resumeReading()
    /// Closes at once; unsent bytes are dropped.
    func close()
    /// Sends everything already written, half-closes, and closes once the
    /// peer closes too or a short grace period passes; input that arrives
    /// meanwhile is discarded. Closing without this would make the kernel
    /// answer unread input with a reset, which can destroy the last reply
    /// (`BYE`, `ERR busy`) before the client reads it.
    func closeAfterSending()
    /// For logs: "127.0.0.1:51234" or "unix".
    var peerDescription: String { get }
    /// The peer as the guessing throttle counts it (PROTOCOL.md *Guessing*).
    var peerAddress: PeerAddress { get }
}

/// A transport that does not share buffers copies them, and all it holds is its own.
extension Connection {
    public func write(shared bytes: SharedBytes) { write([bytes.array]) }
    public func writeWithoutQueuing(shared bytes: SharedBytes) -> Int { writeWithoutQueuing([bytes.array]) }
    public var queuedOwnMemory: Int { queuedWriteBytes }
    /// A transport without an address (an in-memory one) counts as a
    /// Unix-socket peer: one address shared by all of them.
    public var peerAddress: PeerAddress { .local }
}
