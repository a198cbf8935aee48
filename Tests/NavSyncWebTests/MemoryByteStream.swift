import NavSyncCore
import UVLoop

/// A byte stream in memory, what the door's unit tests put under a
/// `ConnectionDoor` in place of a socket (as NIO's `EmbeddedChannel` stands
/// in for one): the test plays the peer (`peerSends`, `peerCloses`) and the
/// kernel (`holdsWrites`, `drain`), and reads what the door wrote.
/// Like a socket, input sent while the stream is not reading waits until
/// the test calls `deliverWaitingInput` after reading resumed; nothing is
/// ever called back from inside `startReading`.
final class MemoryByteStream: ByteStream {
    var onRead: ((UnsafeRawBufferPointer) -> Void)?
    var onEnd: ((StreamEnd) -> Void)?
    var onWriteQueueDrained: (() -> Void)?
    let peerDescription = "memory"
    let peerAddress = PeerAddress.local
    var isEncrypted = false
    private(set) var isClosed = false
    private(set) var isReading = false
    private(set) var writeShutDown = false
    /// Everything written, in order, shared buffers included.
    private(set) var written: [UInt8] = []
    /// The shared buffers written by reference, in order.
    private(set) var sharedWrites: [SharedBytes] = []
    /// While true, what is written stays queued until `drain` (a peer that does not read).
    var holdsWrites = false
    private(set) var queuedWriteBytes = 0
    var queuedWriteMemory: Int { queuedWriteBytes }
    var queuedOwnMemory: Int { queuedWriteBytes }
    private var waitingInput: [[UInt8]] = []

    /// The peer sends bytes: read now if the stream is reading, else kept for later.
    func peerSends(_ bytes: [UInt8]) {
        guard !isClosed else { return }
        if isReading && waitingInput.isEmpty {
            bytes.withUnsafeBytes { onRead?($0) }
        } else {
            waitingInput.append(bytes)
        }
    }

    func peerSends(_ text: String) { peerSends(Array(text.utf8)) }

    /// Hands on input that waited while reading was stopped, as far as reading goes on.
    func deliverWaitingInput() {
        while isReading, !isClosed, !waitingInput.isEmpty {
            let bytes = waitingInput.removeFirst()
            bytes.withUnsafeBytes { onRead?($0) }
        }
    }

    var hasWaitingInput: Bool { !waitingInput.isEmpty }

    func peerCloses() { onEnd?(.eof) }

    /// The peer read everything queued.
    func drain() {
        guard queuedWriteBytes > 0 else { return }
        queuedWriteBytes = 0
        onWriteQueueDrained?()
    }

    /// Takes what was written so far (so a test can look at each step's output alone).
    func takeWritten() -> [UInt8] {
        defer { written = [] }
        return written
    }

    func startReading() { isReading = true }
    func stopReading() { isReading = false }

    func write(_ chunks: [[UInt8]]) {
        guard !isClosed else { return }
        for chunk in chunks {
            written += chunk
            if holdsWrites { queuedWriteBytes += chunk.count }
        }
    }

    func writeWithoutQueuing(_ chunks: [[UInt8]]) -> Int {
        write(chunks)
        return chunks.reduce(0) { $0 + $1.count }
    }

    func write(shared bytes: SharedBytes) {
        guard !isClosed else { return }
        sharedWrites.append(bytes)
        written += bytes.array
        if holdsWrites { queuedWriteBytes += bytes.count }
    }

    func writeWithoutQueuing(shared bytes: SharedBytes) -> Int {
        write(shared: bytes)
        return bytes.count
    }

    func shutdownWrite() { writeShutDown = true }

    func close() {
        isClosed = true
        isReading = false
    }
}
