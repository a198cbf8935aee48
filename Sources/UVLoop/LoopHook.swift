import CLibUV

/// A callback that runs once per loop iteration, just before the loop blocks for IO.
/// Created by `EventLoop.beforeBlocking(_:)`; owns a `uv_prepare_t`.
public final class LoopHook: HandleOwner {
    private let loop: EventLoop
    private var handle: UnsafeMutablePointer<uv_prepare_t>?
    private var body: (() -> Void)?

    init(loop: EventLoop, body: @escaping () -> Void) {
        self.loop = loop
        self.body = body
        let handle = allocateHandle(uv_prepare_t.self)
        uv_prepare_init(loop.raw, handle)
        self.handle = handle
        adopt(asHandle(handle))
        uv_prepare_start(handle) { handle in
            guard let handle, let hook = handleOwner(asHandle(handle), as: LoopHook.self) else { return }
            hook.fire()
        }
        // A hook only reacts to other work; it must not keep `run()` from returning.
        uv_unref(asHandle(handle))
    }

    private func fire() {
        let body = self.body
        body?()
    }

    /// Stops the hook; its body will not run again. Safe to call more than once, including from inside the body.
    /// Must be called on the loop thread.
    public func close() {
        guard let handle else { return }
        self.handle = nil
        body = nil
        closeHandle(asHandle(handle))
    }
}
