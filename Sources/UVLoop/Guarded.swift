import CLibUV

/// A value shared between threads, reached only under a lock (libuv's
/// `uv_mutex_t`, a pthread mutex). Used where a loop thread meets other
/// threads: the commands posted to a loop, the events it hands back.
///
/// Not `Synchronization.Mutex`: on Linux that one waits with raw futex
/// calls, which ThreadSanitizer does not see, so every access it guards
/// would be reported as a race and real races would drown in the noise.
public final class Guarded<Value>: @unchecked Sendable {
    // Sendable by hand at the C boundary: `value` is read and written only
    // between uv_mutex_lock and uv_mutex_unlock on `mutex`, which is
    // initialised in init and destroyed in deinit, when no thread can hold it.
    private let mutex: UnsafeMutablePointer<uv_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = allocateHandle(uv_mutex_t.self)
        // Fails only when the system is out of resources for a mutex, where nothing can go on.
        precondition(uv_mutex_init(mutex) == 0, "uv_mutex_init failed")
    }

    deinit {
        uv_mutex_destroy(mutex)
        freeHandleMemory(mutex)
    }

    /// Runs `body` with the value, holding the lock. `body` must not block or take this lock again.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        uv_mutex_lock(mutex)
        defer { uv_mutex_unlock(mutex) }
        return try body(&value)
    }
}
