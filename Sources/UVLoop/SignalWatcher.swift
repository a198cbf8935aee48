import CLibUV

/// Runs a callback on the loop thread when the process receives a signal; owns a `uv_signal_t`.
///
/// libuv installs its own handler for the signal while the watcher is open,
/// replacing any earlier disposition (for example a `SIG_IGN`).
public final class SignalWatcher: HandleOwner {
    private let loop: EventLoop
    private var handle: UnsafeMutablePointer<uv_signal_t>?
    private var body: (() -> Void)?

    /// Starts watching `signal` (for example `SIGTERM`). `body` runs on the loop thread, once per delivery
    /// that the loop notices (several quick deliveries may be merged).
    /// Must be called on the loop thread.
    public init(loop: EventLoop, signal: Int32, _ body: @escaping () -> Void) throws(UVError) {
        let handle = allocateHandle(uv_signal_t.self)
        let rc = uv_signal_init(loop.raw, handle)
        if rc < 0 {
            freeHandleMemory(handle)
            throw UVError(code: rc)
        }
        self.loop = loop
        self.body = body
        self.handle = handle
        adopt(asHandle(handle))
        let started = uv_signal_start(handle, { handle, _ in
            guard let handle, let watcher = handleOwner(asHandle(handle), as: SignalWatcher.self) else { return }
            let body = watcher.body
            body?()
        }, signal)
        if started < 0 {
            close()
            throw UVError(code: started)
        }
    }

    /// Lets `EventLoop.run()` return even while this watcher is open.
    /// Must be called on the loop thread.
    public func unref() {
        guard let handle else { return }
        uv_unref(asHandle(handle))
    }

    /// Stops watching and restores the signal's default handling. Safe to call more than once.
    /// Must be called on the loop thread.
    public func close() {
        guard let handle else { return }
        self.handle = nil
        body = nil
        closeHandle(asHandle(handle))
    }
}
