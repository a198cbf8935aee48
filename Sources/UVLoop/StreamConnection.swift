import CLibUV
import NavSyncCore

/// One connected byte stream: a TCP socket (`uv_tcp_t`) or a Unix domain socket (`uv_pipe_t`).
///
/// Get one from `StreamListener`'s `onConnection`, `connectTCP` or
/// `connectUnix`. The connection keeps itself alive until `close()` (or
/// `EventLoop.shutdown()`), so whoever receives it must close it.
/// After `close()` none of the callbacks fire and every method does nothing.
///
/// All members must be used on the loop thread.
public final class StreamConnection: HandleOwner {
    enum Kind {
        case tcp
        case pipe
    }

    /// Writes whose bytes are not yet handed to the kernel are copied into one
    /// block: the `uv_write_t` first, then the bytes, freed together in the
    /// write callback.
    private static let writeHeaderSize = (MemoryLayout<uv_write_t>.size + 15) & ~15
    /// How many chunks go into one `uv_try_write` (one writev).
    private static let chunksPerTry = 64

    let loop: EventLoop
    private let kind: Kind
    /// Nil once `close()` was called; from then on libuv owns the memory until the close callback.
    private var stream: UnsafeMutablePointer<uv_stream_t>?
    /// Set when `onEnd` has been called (or is about to be): input is over.
    private var ended = false
    /// Set when `onEnd(.error)` has been called; nothing is reported after it.
    private var failed = false
    /// Set on the first write error; later writes are dropped.
    private var writeFailed = false
    private var writeShutDown = false
    /// `uv_write` requests whose callback has not run yet.
    private var pendingWrites = 0
    /// Memory of this connection's own pending writes: each copied block
    /// (request, bytes, malloc's word) and each request that points into a
    /// shared buffer (request, malloc's word); the shared bytes are not in it.
    private var ownWriteMemory = 0

    /// Called with each chunk of bytes read. The buffer is valid only during the call.
    public var onRead: ((UnsafeRawBufferPointer) -> Void)?
    /// Called when the peer finished sending (`.eof`) or a read or write failed (`.error`): once, or
    /// twice when a write fails after `.eof` (writing may go on after EOF, and its failure must be heard).
    /// Never called from inside a method of this class; always from a loop callback.
    public var onEnd: ((StreamEnd) -> Void)?
    /// Called when `queuedWriteBytes` went back to 0 after queued writes completed.
    /// Not called for writes that the kernel took at once.
    public var onWriteQueueDrained: (() -> Void)?

    /// The peer's address, "127.0.0.1:5555" or "[::1]:5555" for TCP, "unix" for a Unix socket.
    public private(set) var peerDescription: String
    /// The peer as the guessing throttle and the TLS handshake share
    /// count it; every Unix-socket peer is `.local`.
    public private(set) var peerAddress: PeerAddress = .local

    init(loop: EventLoop, kind: Kind) throws(UVError) {
        let stream: UnsafeMutablePointer<uv_stream_t>
        let rc: Int32
        switch kind {
        case .tcp:
            let tcp = allocateHandle(uv_tcp_t.self)
            rc = uv_tcp_init(loop.raw, tcp)
            stream = asStream(tcp)
        case .pipe:
            let pipe = allocateHandle(uv_pipe_t.self)
            rc = uv_pipe_init(loop.raw, pipe, 0)
            stream = asStream(pipe)
        }
        if rc < 0 {
            freeHandleMemory(stream)
            throw UVError(code: rc)
        }
        self.loop = loop
        self.kind = kind
        self.stream = stream
        self.peerDescription = kind == .pipe ? "unix" : "unknown"
        adopt(asHandle(stream))
    }

    /// True after `close()`.
    public var isClosed: Bool {
        stream == nil
    }

    /// Bytes handed to `uv_write` that the kernel has not taken yet (`uv_stream_get_write_queue_size`).
    public var queuedWriteBytes: Int {
        guard let stream else { return 0 }
        return uv_stream_get_write_queue_size(stream)
    }

    /// Memory the queued writes take: their bytes, plus for each pending `uv_write` its request
    /// header and the allocator's own word (each queued write is one block). 0 once everything
    /// queued has been sent, even before the completion callbacks ran.
    public var queuedWriteMemory: Int {
        let bytes = queuedWriteBytes
        return bytes == 0 ? 0 : bytes + pendingWrites * (Self.writeHeaderSize + Self.allocatorOverhead)
    }

    /// What malloc adds to each block it hands out (glibc: one size word, rounded to 16).
    private static let allocatorOverhead = 16

    /// The memory held for this connection alone: `queuedWriteMemory` without
    /// the shared buffers its queued writes point into (those are charged
    /// once, to their `SharedBytesLedger`). 0 once everything queued has been sent.
    public var queuedOwnMemory: Int {
        queuedWriteBytes == 0 ? 0 : ownWriteMemory
    }

    // MARK: Reading

    /// Starts (or resumes) delivering bytes to `onRead`. Does nothing if already reading or after `onEnd` was called.
    public func startReading() {
        guard let stream, !ended else { return }
        let rc = uv_read_start(
            stream,
            { handle, _, buffer in
                guard let handle, let buffer else { return }
                let loop = EventLoop.from(handle.pointee.loop)
                buffer.pointee = uv_buf_init(
                    loop.readBuffer.assumingMemoryBound(to: CChar.self), UInt32(EventLoop.readBufferSize))
            },
            { stream, nread, buffer in
                guard let stream, let connection = handleOwner(asHandle(stream), as: StreamConnection.self) else { return }
                connection.didRead(nread, buffer?.pointee.base)
            })
        // Starting twice is harmless (libuv 1.44 answers EALREADY); anything else is a real failure.
        if rc < 0, rc != UV_EALREADY.rawValue { reportEndLater(.error(UVError(code: rc))) }
    }

    /// Stops delivering bytes until `startReading()` is called again.
    public func stopReading() {
        guard let stream else { return }
        uv_read_stop(stream)
    }

    private func didRead(_ nread: Int, _ base: UnsafeMutablePointer<CChar>?) {
        if nread > 0 {
            let body = onRead
            body?(UnsafeRawBufferPointer(start: base, count: nread))
        } else if nread == Int(UV_EOF.rawValue) {
            reportEnd(.eof)
        } else if nread < 0 {
            reportEnd(.error(UVError(code: Int32(nread))))
        }
        // nread == 0 means "nothing this time" (EAGAIN); nothing to report.
    }

    /// Calls `onEnd` for the first end of input, and once more for an error that
    /// follows an EOF; stops reading.
    private func reportEnd(_ end: StreamEnd) {
        guard let stream, !failed else { return }
        if case .error = end {
            failed = true
        } else if ended {
            return
        }
        ended = true
        uv_read_stop(stream)
        let body = onEnd
        body?(end)
    }

    /// Reports `end` from a later loop callback, so that no method calls `onEnd` re-entrantly.
    private func reportEndLater(_ end: StreamEnd) {
        loop.deferToNextTurn { [self] in reportEnd(end) }
    }

    // MARK: Writing

    /// Writes the chunks in order as one batch: `uv_try_write` of the whole batch first (one writev per 64 chunks);
    /// whatever the kernel does not take is copied into one owned buffer and handed to `uv_write`
    /// (freed in its callback, or at once if `uv_write` fails). If writes are already queued,
    /// `uv_try_write` is skipped so that order is kept.
    ///
    /// Write errors are reported through `onEnd(.error)` from a later callback, never from inside `write`.
    /// After a write error, or after `shutdownWrite()`, bytes are dropped (the latter reports EPIPE).
    public func write(_ chunks: [[UInt8]]) {
        guard let stream, !writeFailed else { return }
        var total = 0
        for chunk in chunks { total += chunk.count }
        guard total > 0 else { return }
        if writeShutDown {
            failWrite(UVError(UV_EPIPE))
            return
        }

        var accepted = 0
        if uv_stream_get_write_queue_size(stream) == 0 {
            switch Self.tryWrite(chunks, to: stream) {
            case .success(let count):
                accepted = count
            case .failure(let error):
                failWrite(error)
                return
            }
        }
        if accepted < total {
            queueWrite(chunks, skipping: accepted, count: total - accepted, on: stream)
        }
    }

    /// Offers the chunks to the kernel without blocking and queues nothing; returns how many leading
    /// bytes it took. With writes already queued it takes none (order is kept). A failed write is
    /// reported through `onEnd` from a later callback, and counts as everything taken (nothing more
    /// can be sent).
    public func writeWithoutQueuing(_ chunks: [[UInt8]]) -> Int {
        var total = 0
        for chunk in chunks { total += chunk.count }
        guard let stream, !writeFailed, !writeShutDown else { return total }
        guard uv_stream_get_write_queue_size(stream) == 0 else { return 0 }
        switch Self.tryWrite(chunks, to: stream) {
        case .success(let count):
            return count
        case .failure(let error):
            failWrite(error)
            return total
        }
    }

    /// Writes a buffer that other connections write too: `uv_try_write` first, and what the kernel
    /// does not take is queued as a `uv_write` that points into the buffer and holds a strong
    /// reference to it until its callback (or at once if `uv_write` fails), not as a copy.
    /// Order, errors and shutdown behave as in `write`.
    public func write(shared bytes: SharedBytes) {
        guard let stream, !writeFailed, bytes.count > 0 else { return }
        if writeShutDown {
            failWrite(UVError(UV_EPIPE))
            return
        }
        var accepted = 0
        if uv_stream_get_write_queue_size(stream) == 0 {
            switch Self.tryWrite(bytes.bytes, to: stream) {
            case .success(let count):
                accepted = count
            case .failure(let error):
                failWrite(error)
                return
            }
        }
        if accepted < bytes.count {
            queueSharedWrite(bytes, from: accepted, on: stream)
        }
    }

    /// `writeWithoutQueuing` for a shared buffer.
    public func writeWithoutQueuing(shared bytes: SharedBytes) -> Int {
        guard let stream, !writeFailed, !writeShutDown else { return bytes.count }
        guard uv_stream_get_write_queue_size(stream) == 0 else { return 0 }
        switch Self.tryWrite(bytes.bytes, to: stream) {
        case .success(let count):
            return count
        case .failure(let error):
            failWrite(error)
            return bytes.count
        }
    }

    /// `writeWithoutQueuing` for bytes the caller keeps: offered straight from its buffer.
    public func writeWithoutQueuing(borrowing bytes: UnsafeRawBufferPointer) -> Int {
        guard let stream, !writeFailed, !writeShutDown else { return bytes.count }
        guard uv_stream_get_write_queue_size(stream) == 0, !bytes.isEmpty else { return 0 }
        switch Self.tryWrite(bytes, to: stream) {
        case .success(let count):
            return count
        case .failure(let error):
            failWrite(error)
            return bytes.count
        }
    }

    /// Offers one run of bytes to the kernel without blocking and returns how many it took.
    private static func tryWrite(_ bytes: UnsafeRawBufferPointer, to stream: UnsafeMutablePointer<uv_stream_t>) -> Result<Int, UVError> {
        var buffer = uv_buf_init(
            UnsafeMutableRawPointer(mutating: bytes.baseAddress)?.assumingMemoryBound(to: CChar.self), UInt32(bytes.count))
        let rc = uv_try_write(stream, &buffer, 1)
        if rc == UV_EAGAIN.rawValue { return .success(0) }
        if rc < 0 { return .failure(UVError(code: rc)) }
        return .success(Int(rc))
    }

    /// Queues the bytes of `shared` from `offset` on with `uv_write`, without copying them: the
    /// request's `data` holds a strong reference to the buffer, released exactly once, in the
    /// write callback, or here if `uv_write` fails (then the callback never runs).
    private func queueSharedWrite(_ shared: SharedBytes, from offset: Int, on stream: UnsafeMutablePointer<uv_stream_t>) {
        let request = UnsafeMutableRawPointer.allocate(
            byteCount: Self.writeHeaderSize, alignment: max(16, MemoryLayout<uv_write_t>.alignment))
        request.initializeMemory(as: UInt8.self, repeating: 0, count: Self.writeHeaderSize)
        let write = request.bindMemory(to: uv_write_t.self, capacity: 1)
        write.pointee.data = Unmanaged.passRetained(shared).toOpaque()
        shared.queuedWriteStarted()
        let rest = UnsafeRawBufferPointer(rebasing: shared.bytes[offset...])
        var buffer = uv_buf_init(
            UnsafeMutableRawPointer(mutating: rest.baseAddress)?.assumingMemoryBound(to: CChar.self), UInt32(rest.count))
        let rc = uv_write(write, stream, &buffer, 1) { request, status in
            guard let request else { return }
            let stream = request.pointee.handle
            StreamConnection.releaseShared(request)
            guard let stream, let connection = handleOwner(asHandle(stream), as: StreamConnection.self) else { return }
            connection.ownWriteMemory -= StreamConnection.sharedRequestMemory
            connection.didWrite(status)
        }
        if rc < 0 {
            Self.releaseShared(write)
            failWrite(UVError(code: rc))
            return
        }
        pendingWrites += 1
        ownWriteMemory += Self.sharedRequestMemory
    }

    /// What a queued write into a shared buffer costs this connection: the request and malloc's word.
    private static let sharedRequestMemory = writeHeaderSize + allocatorOverhead

    /// Lets go of a shared write's buffer and frees its request.
    private static func releaseShared(_ request: UnsafeMutablePointer<uv_write_t>) {
        let shared = Unmanaged<SharedBytes>.fromOpaque(request.pointee.data).takeRetainedValue()
        shared.queuedWriteEnded()
        UnsafeMutableRawPointer(request).deallocate()
    }

    /// Offers the chunks to the kernel without blocking and returns how many bytes it took.
    private static func tryWrite(_ chunks: [[UInt8]], to stream: UnsafeMutablePointer<uv_stream_t>) -> Result<Int, UVError> {
        var accepted = 0
        var start = chunks.startIndex
        while start < chunks.endIndex {
            let group = chunks[start..<min(start + chunksPerTry, chunks.endIndex)]
            var groupBytes = 0
            for chunk in group { groupBytes += chunk.count }
            let rc = withBuffers(group) { buffers in
                uv_try_write(stream, buffers.baseAddress, UInt32(buffers.count))
            }
            if rc == UV_EAGAIN.rawValue { break }
            if rc < 0 {
                return .failure(UVError(code: rc))
            }
            accepted += Int(rc)
            if Int(rc) < groupBytes { break }
            start = group.endIndex
        }
        return .success(accepted)
    }

    /// Calls `body` with one `uv_buf_t` per chunk, pointing into the chunks' own storage.
    /// The pointers are valid only during `body`.
    private static func withBuffers<R>(
        _ chunks: ArraySlice<[UInt8]>, _ body: (UnsafeMutableBufferPointer<uv_buf_t>) -> R
    ) -> R {
        withUnsafeTemporaryAllocation(of: uv_buf_t.self, capacity: chunks.count) { buffers in
            // One nested closure per chunk keeps every chunk's storage pinned at once.
            func pin(_ index: Int) -> R {
                if index == chunks.endIndex { return body(buffers) }
                return chunks[index].withUnsafeBufferPointer { bytes in
                    let base = UnsafeMutableRawPointer(mutating: bytes.baseAddress)?.assumingMemoryBound(to: CChar.self)
                    buffers.initializeElement(at: index - chunks.startIndex, to: uv_buf_init(base, UInt32(bytes.count)))
                    return pin(index + 1)
                }
            }
            return pin(chunks.startIndex)
        }
    }

    /// Copies the bytes after the first `skipping` into one block and queues it with `uv_write`.
    private func queueWrite(
        _ chunks: [[UInt8]], skipping: Int, count: Int, on stream: UnsafeMutablePointer<uv_stream_t>
    ) {
        let block = UnsafeMutableRawPointer.allocate(
            byteCount: Self.writeHeaderSize + count,
            alignment: max(16, MemoryLayout<uv_write_t>.alignment))
        block.initializeMemory(as: UInt8.self, repeating: 0, count: Self.writeHeaderSize)
        let request = block.bindMemory(to: uv_write_t.self, capacity: 1)
        let bytes = block + Self.writeHeaderSize

        var toSkip = skipping
        var filled = 0
        for chunk in chunks {
            if toSkip >= chunk.count {
                toSkip -= chunk.count
                continue
            }
            chunk.withUnsafeBytes { source in
                let part = UnsafeRawBufferPointer(rebasing: source[toSkip...])
                (bytes + filled).copyMemory(from: part.baseAddress!, byteCount: part.count)
                filled += part.count
            }
            toSkip = 0
        }

        // The callback learns how much memory it frees from the request itself.
        let memory = Self.writeHeaderSize + count + Self.allocatorOverhead
        request.pointee.data = UnsafeMutableRawPointer(bitPattern: memory)
        var buffer = uv_buf_init(bytes.assumingMemoryBound(to: CChar.self), UInt32(count))
        let rc = uv_write(request, stream, &buffer, 1) { request, status in
            guard let request else { return }
            let stream = request.pointee.handle
            let memory = Int(bitPattern: request.pointee.data)
            UnsafeMutableRawPointer(request).deallocate()
            guard let stream, let connection = handleOwner(asHandle(stream), as: StreamConnection.self) else { return }
            connection.ownWriteMemory -= memory
            connection.didWrite(status)
        }
        if rc < 0 {
            block.deallocate()
            failWrite(UVError(code: rc))
            return
        }
        pendingWrites += 1
        ownWriteMemory += memory
    }

    private func didWrite(_ status: Int32) {
        pendingWrites -= 1
        guard !isClosed else { return }
        if status < 0 {
            writeFailed = true
            reportEnd(.error(UVError(code: status)))
            return
        }
        if pendingWrites == 0, !writeFailed {
            let body = onWriteQueueDrained
            body?()
        }
    }

    /// Drops further writes and reports the error from a later loop turn.
    private func failWrite(_ error: UVError) {
        writeFailed = true
        reportEndLater(.error(error))
    }

    /// Half-closes the connection: after the queued writes are sent, the peer reads EOF.
    /// Reading continues. Safe to call more than once.
    public func shutdownWrite() {
        guard let stream, !writeShutDown else { return }
        writeShutDown = true
        let request = allocateHandle(uv_shutdown_t.self)
        let rc = uv_shutdown(request, stream) { request, status in
            guard let request else { return }
            let stream = request.pointee.handle
            freeHandleMemory(request)
            guard status < 0, status != UV_ECANCELED.rawValue,
                let stream, let connection = handleOwner(asHandle(stream), as: StreamConnection.self)
            else { return }
            connection.reportEnd(.error(UVError(code: status)))
        }
        if rc < 0 {
            freeHandleMemory(request)
            reportEndLater(.error(UVError(code: rc)))
        }
    }

    // MARK: Lifetime

    /// Closes the connection. Queued writes are dropped and no callback fires afterwards.
    /// Safe to call more than once, including from inside `onRead` or `onEnd`.
    public func close() {
        guard let stream else { return }
        self.stream = nil
        onRead = nil
        onEnd = nil
        onWriteQueueDrained = nil
        closeHandle(asHandle(stream))
    }

    /// Turns Nagle's algorithm off (`true`) or on. TCP only; does nothing for Unix sockets.
    public func setNoDelay(_ on: Bool) {
        guard let stream, kind == .tcp else { return }
        uv_tcp_nodelay(tcpHandle(stream), on ? 1 : 0)
    }

    /// Turns TCP keepalive on, probing after `seconds` of silence, or off
    /// (`nil`), so a peer that vanished without closing is found. TCP only;
    /// does nothing for Unix sockets.
    @discardableResult
    public func setKeepAlive(seconds: Int?) -> UVError? {
        guard let stream, kind == .tcp else { return nil }
        let rc = uv_tcp_keepalive(tcpHandle(stream), seconds == nil ? 0 : 1, UInt32(clamping: seconds ?? 0))
        return rc < 0 ? UVError(code: rc) : nil
    }

    private func tcpHandle(_ stream: UnsafeMutablePointer<uv_stream_t>) -> UnsafeMutablePointer<uv_tcp_t> {
        UnsafeMutablePointer<uv_tcp_t>(OpaquePointer(stream))
    }

    /// Records the peer's address while the socket is connected.
    private func notePeer() {
        guard let stream, kind == .tcp else { return }
        let tcp = tcpHandle(stream)
        if let peer = try? SocketAddress(reading: { uv_tcp_getpeername(tcp, $0, $1) }) {
            peerDescription = peer.description
            peerAddress = peer.peerAddress
        }
    }

    // MARK: Accepting and connecting

    /// Accepts one pending connection from a listening stream, or returns nil if that failed.
    static func accept(from server: UnsafeMutablePointer<uv_stream_t>, loop: EventLoop, kind: Kind) -> StreamConnection? {
        guard let connection = try? StreamConnection(loop: loop, kind: kind), let stream = connection.stream else {
            return nil
        }
        if uv_accept(server, stream) < 0 {
            connection.close()
            return nil
        }
        connection.notePeer()
        return connection
    }

    /// Connects to a TCP server at an IPv4 or IPv6 literal. `completion` runs on the loop thread,
    /// always from a later callback (also when the address is invalid).
    /// Must be called on the loop thread.
    public static func connectTCP(
        loop: EventLoop, host: String, port: Int,
        completion: @escaping (Result<StreamConnection, UVError>) -> Void
    ) {
        do throws(UVError) {
            let address = try SocketAddress(host: host, port: port)
            let connection = try StreamConnection(loop: loop, kind: .tcp)
            let request = PendingConnect.start(connection, completion)
            let rc = address.withSockaddr { address in
                uv_tcp_connect(request, connection.tcpHandle(connection.stream!), address) { request, status in
                    PendingConnect.finish(request, status)
                }
            }
            if rc < 0 {
                PendingConnect.abandon(request)
                connection.close()
                throw UVError(code: rc)
            }
        } catch {
            loop.deferToNextTurn { completion(.failure(error)) }
        }
    }

    /// Connects to a Unix domain socket at `path`. `completion` runs on the loop thread,
    /// always from a later callback.
    /// Must be called on the loop thread.
    public static func connectUnix(
        loop: EventLoop, path: String,
        completion: @escaping (Result<StreamConnection, UVError>) -> Void
    ) {
        do throws(UVError) {
            try checkSocketPathLength(path)
            let connection = try StreamConnection(loop: loop, kind: .pipe)
            let request = PendingConnect.start(connection, completion)
            let pipe = UnsafeMutablePointer<uv_pipe_t>(OpaquePointer(connection.stream!))
            // uv_pipe_connect reports every error through the callback.
            uv_pipe_connect(request, pipe, path) { request, status in
                PendingConnect.finish(request, status)
            }
        } catch {
            loop.deferToNextTurn { completion(.failure(error)) }
        }
    }

    /// A connect in flight: the connection not yet handed out and the caller's completion.
    /// Kept alive by the `uv_connect_t`'s `data` until the connect callback.
    private final class PendingConnect {
        let connection: StreamConnection
        let completion: (Result<StreamConnection, UVError>) -> Void

        private init(_ connection: StreamConnection, _ completion: @escaping (Result<StreamConnection, UVError>) -> Void) {
            self.connection = connection
            self.completion = completion
        }

        static func start(
            _ connection: StreamConnection, _ completion: @escaping (Result<StreamConnection, UVError>) -> Void
        ) -> UnsafeMutablePointer<uv_connect_t> {
            let request = allocateHandle(uv_connect_t.self)
            request.pointee.data = Unmanaged.passRetained(PendingConnect(connection, completion)).toOpaque()
            return request
        }

        /// Frees a request whose connect call failed before it was queued.
        static func abandon(_ request: UnsafeMutablePointer<uv_connect_t>) {
            Unmanaged<PendingConnect>.fromOpaque(request.pointee.data).release()
            freeHandleMemory(request)
        }

        static func finish(_ request: UnsafeMutablePointer<uv_connect_t>?, _ status: Int32) {
            guard let request else { return }
            let pending = Unmanaged<PendingConnect>.fromOpaque(request.pointee.data).takeRetainedValue()
            freeHandleMemory(request)
            let connection = pending.connection
            if status < 0 || connection.isClosed {
                connection.close()
                pending.completion(.failure(UVError(code: status < 0 ? status : UV_ECANCELED.rawValue)))
            } else {
                connection.notePeer()
                pending.completion(.success(connection))
            }
        }
    }
}
