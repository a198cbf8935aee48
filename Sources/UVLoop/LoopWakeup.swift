import CLibUV

/// The one way into a loop from another thread: `wake()` may be called from
/// any thread, and the loop then runs `body` on its own thread (a
/// `uv_async_t`). Wake-ups that arrive before the body ran are merged into
/// one call, so the body must drain everything that is waiting (a queue the
/// caller keeps under its own lock), not handle one item.
///
/// Created, used and closed on the loop thread, except `wake()`.
public final class LoopWakeup: HandleOwner, @unchecked Sendable {
    // Sendable by hand because this sits on the C boundary: the only member
    // touched off the loop thread is `handle`, and only under `lock`, where
    // `uv_async_send` (documented thread-safe) is called on it. `close()` takes
    // the same lock to forget the pointer before libuv may free it, so a
    // `wake()` racing with `close()` either sends to a live handle or does
    // nothing. `loop` and `body` are touched on the loop thread only.
    private let loop: EventLoop
    /// The handle's address (0 once closed): kept as an integer because a
    /// pointer is not `Sendable`, and sharing it with other threads is the point.
    private let lock = Guarded<UInt>(0)
    private var body: (() -> Void)?

    /// Must be called on the loop thread. The handle keeps the loop running
    /// until `close()`, as a connection does: a loop that waits for work from
    /// other threads has to stay up.
    public init(loop: EventLoop, _ body: @escaping () -> Void) {
        self.loop = loop
        self.body = body
        let handle = allocateHandle(uv_async_t.self)
        // uv_async_init fails only for a bad loop; ours is initialised.
        uv_async_init(loop.raw, handle) { handle in
            guard let handle, let wakeup = handleOwner(asHandle(handle), as: LoopWakeup.self) else { return }
            let body = wakeup.body
            body?()
        }
        adopt(asHandle(handle))
        lock.withLock { $0 = UInt(bitPattern: handle) }
    }

    /// Asks the loop to run the body soon. Safe from any thread, at any time;
    /// does nothing after `close()`.
    public func wake() {
        lock.withLock { address in
            if let handle = UnsafeMutablePointer<uv_async_t>(bitPattern: address) { uv_async_send(handle) }
        }
    }

    /// Stops for good: the body will not run again. Safe to call more than once.
    /// Must be called on the loop thread.
    public func close() {
        let address = lock.withLock { address in
            defer { address = 0 }
            return address
        }
        guard let handle = UnsafeMutablePointer<uv_async_t>(bitPattern: address) else { return }
        body = nil
        closeHandle(asHandle(handle))
    }
}
