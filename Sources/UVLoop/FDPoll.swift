import CLibUV
import Glibc

/// Calls back when a plain file descriptor becomes readable (stdin for the terminal client); owns a `uv_poll_t`.
///
/// libuv switches the descriptor to non-blocking mode. The flags it had
/// before are put back by `close()`, so a terminal is left as it was found.
/// The descriptor itself stays open: the caller owns it.
public final class FDPoll: HandleOwner {
    private let loop: EventLoop
    private let fd: Int32
    private let savedFlags: Int32
    private var handle: UnsafeMutablePointer<uv_poll_t>?
    private var onReadable: (() -> Void)?

    /// Starts watching `fd` for readability. `onReadable` also runs when the poll reports an error,
    /// so that the reader sees the error from its own read.
    /// Must be called on the loop thread.
    public init(loop: EventLoop, fd: Int32, onReadable: @escaping () -> Void) throws(UVError) {
        let flags = fcntl(fd, F_GETFL)
        if flags < 0 { throw UVError(code: -errno) }
        let handle = allocateHandle(uv_poll_t.self)
        let rc = uv_poll_init(loop.raw, handle, fd)
        if rc < 0 {
            freeHandleMemory(handle)
            _ = fcntl(fd, F_SETFL, flags)
            throw UVError(code: rc)
        }
        self.loop = loop
        self.fd = fd
        self.savedFlags = flags
        self.onReadable = onReadable
        self.handle = handle
        adopt(asHandle(handle))
        let started = uv_poll_start(handle, Int32(UV_READABLE.rawValue)) { handle, _, _ in
            guard let handle, let poll = handleOwner(asHandle(handle), as: FDPoll.self) else { return }
            let body = poll.onReadable
            body?()
        }
        if started < 0 {
            close()
            throw UVError(code: started)
        }
    }

    /// Stops watching and restores the descriptor's original file status flags. Safe to call more than once.
    /// Must be called on the loop thread.
    public func close() {
        guard let handle else { return }
        self.handle = nil
        onReadable = nil
        closeHandle(asHandle(handle))
        _ = fcntl(fd, F_SETFL, savedFlags)
    }
}
