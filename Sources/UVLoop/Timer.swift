import CLibUV

/// A one-shot or repeating timer on the loop; owns a `uv_timer_t`.
public final class LoopTimer: HandleOwner {
    private let loop: EventLoop
    private var handle: UnsafeMutablePointer<uv_timer_t>?
    private var body: (() -> Void)?

    /// Creates a stopped timer.
    /// Must be called on the loop thread.
    public init(loop: EventLoop) {
        self.loop = loop
        let handle = allocateHandle(uv_timer_t.self)
        // uv_timer_init cannot fail: it only fills in the struct.
        uv_timer_init(loop.raw, handle)
        self.handle = handle
        adopt(asHandle(handle))
    }

    /// Calls `body` after `afterMilliseconds`, then every `repeatMilliseconds` if that is not zero.
    /// Starting a running timer restarts it with the new body. Does nothing after `close()`.
    /// Must be called on the loop thread.
    public func start(afterMilliseconds: UInt64, repeatMilliseconds: UInt64 = 0, _ body: @escaping () -> Void) {
        guard let handle else { return }
        self.body = body
        uv_timer_start(handle, { handle in
            guard let handle, let timer = handleOwner(asHandle(handle), as: LoopTimer.self) else { return }
            let body = timer.body
            body?()
        }, afterMilliseconds, repeatMilliseconds)
    }

    /// Stops the timer; it can be started again.
    /// Must be called on the loop thread.
    public func stop() {
        guard let handle else { return }
        uv_timer_stop(handle)
        body = nil
    }

    /// Stops the timer for good. Safe to call more than once, including from inside the body.
    /// Must be called on the loop thread.
    public func close() {
        guard let handle else { return }
        self.handle = nil
        body = nil
        closeHandle(asHandle(handle))
    }

    /// Lets `EventLoop.run()` return even while this timer is pending.
    /// Must be called on the loop thread.
    public func unref() {
        guard let handle else { return }
        uv_unref(asHandle(handle))
    }
}
