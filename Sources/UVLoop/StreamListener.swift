import CLibUV
import Glibc

/// A listening TCP or Unix domain socket that hands each accepted connection to `onConnection`.
///
/// The listener keeps itself alive until `close()` (or `EventLoop.shutdown()`).
/// All members must be used on the loop thread.
public final class StreamListener: HandleOwner {
    private let loop: EventLoop
    private let kind: StreamConnection.Kind
    private var stream: UnsafeMutablePointer<uv_stream_t>?
    private var onConnection: ((StreamConnection) -> Void)?
    private let socketPath: String?

    /// Where the listener is bound: "127.0.0.1:40123", "[::1]:40123" or "unix:/path".
    public let boundAddress: String
    /// The port actually bound (useful after asking for port 0); 0 for a Unix socket.
    public let port: Int

    private init(
        loop: EventLoop, kind: StreamConnection.Kind, stream: UnsafeMutablePointer<uv_stream_t>,
        boundAddress: String, port: Int, socketPath: String?,
        onConnection: @escaping (StreamConnection) -> Void
    ) {
        self.loop = loop
        self.kind = kind
        self.stream = stream
        self.boundAddress = boundAddress
        self.port = port
        self.socketPath = socketPath
        self.onConnection = onConnection
        adopt(asHandle(stream))
    }

    /// Listens on TCP. `host` is an IPv4 or IPv6 literal ("127.0.0.1", "::1", "0.0.0.0"); port 0 picks a free port.
    /// Each accepted connection is passed to `onConnection`, which must keep it and eventually close it.
    /// Throws when the address is not a literal or cannot be bound (`isAddressInUse` for EADDRINUSE).
    /// Must be called on the loop thread.
    public static func tcp(
        loop: EventLoop, host: String, port: Int, backlog: Int32 = 511,
        onConnection: @escaping (StreamConnection) -> Void
    ) throws(UVError) -> StreamListener {
        let address = try SocketAddress(host: host, port: port)
        let tcp = allocateHandle(uv_tcp_t.self)
        let initialised = uv_tcp_init(loop.raw, tcp)
        if initialised < 0 {
            freeHandleMemory(tcp)
            throw UVError(code: initialised)
        }
        let bound: SocketAddress
        do throws(UVError) {
            // libuv may hold EADDRINUSE back until uv_listen; both paths throw.
            try UVError.check(address.withSockaddr { uv_tcp_bind(tcp, $0, 0) })
            bound = try SocketAddress(reading: { uv_tcp_getsockname(tcp, $0, $1) })
        } catch {
            closeUnadopted(asHandle(tcp))
            throw error
        }
        let listener = StreamListener(
            loop: loop, kind: .tcp, stream: asStream(tcp),
            boundAddress: bound.description, port: bound.port, socketPath: nil,
            onConnection: onConnection)
        try listener.listen(backlog: backlog)
        return listener
    }

    /// Listens on a Unix domain socket at `path`.
    ///
    /// A socket file already at `path` is removed first only if nothing accepts connections on it
    /// (a stale file from a crashed process); if something does, this throws EADDRINUSE. Other kinds
    /// of file are never removed. The socket file is made mode 0600 before any connection is accepted.
    /// Must be called on the loop thread.
    public static func unix(
        loop: EventLoop, path: String, backlog: Int32 = 511,
        onConnection: @escaping (StreamConnection) -> Void
    ) throws(UVError) -> StreamListener {
        try checkSocketPathLength(path)
        try removeStaleSocket(at: path)
        let pipe = allocateHandle(uv_pipe_t.self)
        let initialised = uv_pipe_init(loop.raw, pipe, 0)
        if initialised < 0 {
            freeHandleMemory(pipe)
            throw UVError(code: initialised)
        }
        do throws(UVError) {
            try UVError.check(uv_pipe_bind(pipe, path))
            // Between bind and listen a connect is refused, so tightening the mode here leaves no window.
            if chmod(path, 0o600) != 0 {
                let error = UVError(code: -errno)
                unlink(path)
                throw error
            }
        } catch {
            closeUnadopted(asHandle(pipe))
            throw error
        }
        let listener = StreamListener(
            loop: loop, kind: .pipe, stream: asStream(pipe),
            boundAddress: "unix:" + path, port: 0, socketPath: path,
            onConnection: onConnection)
        try listener.listen(backlog: backlog)
        return listener
    }

    /// Starts accepting; on failure closes the listener and throws.
    private func listen(backlog: Int32) throws(UVError) {
        guard let stream else { return }
        let rc = uv_listen(stream, backlog) { server, status in
            guard let server, let listener = handleOwner(asHandle(server), as: StreamListener.self) else { return }
            listener.acceptOne(status)
        }
        if rc < 0 {
            close()
            throw UVError(code: rc)
        }
    }

    private func acceptOne(_ status: Int32) {
        // A failed accept (EMFILE, ECONNABORTED...) loses only that connection; keep listening.
        guard status >= 0, let stream,
            let connection = StreamConnection.accept(from: stream, loop: loop, kind: kind)
        else { return }
        if let body = onConnection {
            body(connection)
        } else {
            connection.close()
        }
    }

    /// Stops accepting. A Unix listener also removes its socket file. Connections already accepted stay open.
    /// Safe to call more than once, including from inside `onConnection`.
    public func close() {
        guard let stream else { return }
        self.stream = nil
        onConnection = nil
        closeHandle(asHandle(stream))
        if let socketPath { unlink(socketPath) }
    }

    /// Removes `path` if it is a socket file that nobody accepts connections on.
    /// Throws EADDRINUSE if a live listener answers.
    private static func removeStaleSocket(at path: String) throws(UVError) {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return }

        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        if probe < 0 { throw UVError(code: -errno) }
        defer { Glibc.close(probe) }

        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)  // length checked by the caller; the rest stays NUL
        }
        let rc = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if rc == 0 || errno == EAGAIN || errno == EINPROGRESS {
            throw UVError(UV_EADDRINUSE)  // someone is listening (or its backlog is full)
        }
        if errno == ECONNREFUSED {
            unlink(path)
        }
        // Anything else (EACCES...) is left for bind to report.
    }
}
