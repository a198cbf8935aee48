import CLibUV
import Glibc

/// A libuv event loop that owns its `uv_loop_t`.
///
/// The loop is single-threaded: this object and every handle created on it
/// must be used only on the thread that calls `run()`. None of these types
/// are `Sendable`, so the compiler keeps them from crossing threads.
///
/// Handles (listeners, connections, timers, ...) keep the loop object alive
/// until they are closed. Call `shutdown()` once at the end to close any
/// handle still open and release the loop.
public final class EventLoop {
    /// Size of the read buffer shared by every connection on this loop.
    static let readBufferSize = 64 * 1024

    let raw: UnsafeMutablePointer<uv_loop_t>

    /// One buffer for all reads on the loop. Safe to share because libuv
    /// hands a read's bytes to its read callback before it allocates for the
    /// next read, and `onRead` may not keep the bytes past its return.
    let readBuffer: UnsafeMutableRawPointer

    /// Runs work queued by `deferToNextTurn(_:)`; its `data` is nil so that
    /// `shutdown()` does not mistake it for a user handle.
    private let idle: UnsafeMutablePointer<uv_idle_t>
    private var deferred: [() -> Void] = []
    private var isShutDown = false
    /// Set once `uv_close` was called on `idle`; its memory may be gone after that.
    private var idleClosed = false

    /// Creates and initialises a new loop.
    public init() throws(UVError) {
        let raw = allocateHandle(uv_loop_t.self)
        let rc = uv_loop_init(raw)
        if rc < 0 {
            freeHandleMemory(raw)
            throw UVError(code: rc)
        }
        self.raw = raw
        readBuffer = UnsafeMutableRawPointer.allocate(byteCount: Self.readBufferSize, alignment: 16)
        idle = allocateHandle(uv_idle_t.self)
        uv_idle_init(raw, idle)
        raw.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        // Every open handle retains the loop, so only our idle handle can be left here.
        if !isShutDown { shutdown() }
        freeHandleMemory(raw)
        readBuffer.deallocate()
    }

    /// Runs until `stop()` is called or nothing active (and referenced) is left.
    /// Must be called on the loop thread, and not from inside a loop callback.
    public func run() {
        precondition(!isShutDown, "EventLoop.run() after shutdown()")
        uv_run(raw, UV_RUN_DEFAULT)
    }

    /// Runs one iteration. With `nowait` false it blocks until at least one event arrived
    /// (if anything is active); with `nowait` true it only handles what is ready now.
    /// Must be called on the loop thread, and not from inside a loop callback.
    public func runOnce(nowait: Bool) {
        precondition(!isShutDown, "EventLoop.runOnce(nowait:) after shutdown()")
        uv_run(raw, nowait ? UV_RUN_NOWAIT : UV_RUN_ONCE)
    }

    /// Makes `run()` return after the current iteration.
    /// Must be called on the loop thread.
    public func stop() {
        uv_stop(raw)
    }

    /// The `uv_loop_t` itself, untyped, for the one C library that attaches its
    /// own handles to this loop: hiredis's libuv adapter (the CHiredis shim).
    /// Whoever attaches handles this way must close them before `shutdown()`,
    /// which only knows how to close handles created by this target.
    public var uvLoopPointer: UnsafeMutableRawPointer { UnsafeMutableRawPointer(raw) }

    /// The loop's cached clock in milliseconds, updated at the start of each iteration.
    public var nowMilliseconds: UInt64 {
        uv_now(raw)
    }

    /// Registers `body` to run once per loop iteration, just before the loop blocks waiting for IO (a `uv_prepare_t`).
    /// Used to flush batched output and fsync once per turn.
    ///
    /// The hook does not by itself keep the loop running. Close the returned hook to stop it.
    /// Must be called on the loop thread.
    @discardableResult
    public func beforeBlocking(_ body: @escaping () -> Void) -> LoopHook {
        LoopHook(loop: self, body: body)
    }

    /// Closes every handle still open (uv_walk), runs the loop until their close callbacks ran, then uv_loop_close.
    /// Call once at the end; the loop cannot be used afterwards.
    /// Must be called on the loop thread, and not from inside a loop callback.
    public func shutdown() {
        guard !isShutDown else { return }
        isShutDown = true
        deferred.removeAll()
        // A few rounds, in case a close callback opened something new.
        for _ in 0..<8 {
            uv_walk(raw, { handle, _ in
                guard let handle, uv_is_closing(handle) == 0 else { return }
                owner(of: handle)?.close()
            }, nil)
            if !idleClosed {
                idleClosed = true
                uv_close(asHandle(idle), { handle in
                    if let handle { freeHandleMemory(handle) }
                })
            }
            uv_run(raw, UV_RUN_DEFAULT)
            if uv_loop_close(raw) == 0 { return }
        }
        assertionFailure("uv_loop_close kept failing: handles or requests still active")
    }

    /// Ignores SIGPIPE for the whole process, so that writing to a closed socket
    /// fails with EPIPE instead of killing the process. libuv does not do this itself.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Runs `work` on a later iteration of the loop, without blocking for IO in between.
    /// Used to report errors from a callback instead of re-entrantly from inside a call.
    /// Must be called on the loop thread.
    func deferToNextTurn(_ work: @escaping () -> Void) {
        guard !isShutDown else { return }
        deferred.append(work)
        if uv_is_active(asHandle(idle)) == 0 {
            uv_idle_start(idle) { handle in
                guard let handle else { return }
                EventLoop.from(handle.pointee.loop).runDeferred()
            }
        }
    }

    private func runDeferred() {
        let batch = deferred
        deferred.removeAll()
        for work in batch { work() }
        if deferred.isEmpty, !idleClosed {
            uv_idle_stop(idle)
        }
    }

    /// The Swift loop behind a `uv_loop_t` created by this class.
    static func from(_ raw: UnsafeMutablePointer<uv_loop_t>) -> EventLoop {
        Unmanaged<EventLoop>.fromOpaque(raw.pointee.data).takeUnretainedValue()
    }
}
