import NavSyncCore

/// The one byte-stream protocol of the tree: what a libuv `StreamConnection`
/// is, and what every layer stacked on one is too. A layer is an adapter
/// that holds the stream below it, takes that stream's callbacks, and
/// offers the same protocol upward: `TLSStream` (ciphertext below,
/// plaintext above) and NavSyncWeb's `ConnectionDoor` (HTTP and WebSocket
/// frames below, lines above) are two. Bytes read travel up through
/// `onRead`; bytes written travel down through `write`; each layer is
/// passed once each way, as in a NIO pipeline. Whoever holds a stream
/// cannot tell how many layers are under it, except by asking
/// `isEncrypted` (the web door's origin rule needs to).
///
/// Every member means what it means on `StreamConnection`; all must be used
/// on the loop thread.
public protocol ByteStream: AnyObject {
    var onRead: ((UnsafeRawBufferPointer) -> Void)? { get set }
    var onEnd: ((StreamEnd) -> Void)? { get set }
    var onWriteQueueDrained: (() -> Void)? { get set }
    var peerDescription: String { get }
    /// The peer as the guessing throttle counts it.
    var peerAddress: PeerAddress { get }
    var isClosed: Bool { get }
    /// Bytes queued for the kernel and not yet taken (for TLS: ciphertext,
    /// plus plaintext written before the handshake finished).
    var queuedWriteBytes: Int { get }
    /// The memory those queued bytes take.
    var queuedWriteMemory: Int { get }
    /// True when the bytes travel inside TLS.
    var isEncrypted: Bool { get }
    func startReading()
    func stopReading()
    /// The memory queued for this connection alone: without shared turn
    /// buffers its queued writes point into (those are charged once, to
    /// the buffer's ledger). Equal to `queuedWriteMemory` where nothing is shared.
    var queuedOwnMemory: Int { get }
    func write(_ chunks: [[UInt8]])
    func writeWithoutQueuing(_ chunks: [[UInt8]]) -> Int
    /// `writeWithoutQueuing` for bytes the caller keeps (a layer's own
    /// buffer): nothing is copied unless the stream must.
    func writeWithoutQueuing(borrowing bytes: UnsafeRawBufferPointer) -> Int
    /// A room's turn that many connections write: a plain stream queues a
    /// reference to it, TLS encrypts it like any other bytes.
    func write(shared bytes: SharedBytes)
    func writeWithoutQueuing(shared bytes: SharedBytes) -> Int
    func shutdownWrite()
    func close()
}

extension ByteStream {
    /// A layer that frames or encrypts what it is given copies it anyway.
    public func writeWithoutQueuing(borrowing bytes: UnsafeRawBufferPointer) -> Int {
        writeWithoutQueuing([Array(bytes)])
    }
}

extension StreamConnection: ByteStream {
    public var isEncrypted: Bool { false }
}
