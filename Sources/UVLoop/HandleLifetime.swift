import CLibUV

/// A Swift object that owns exactly one libuv handle.
///
/// The rule every owner follows: it allocates its `uv_*_t` with
/// `allocateHandle`, stores a retained reference to itself in the handle's
/// `data` with `adopt(_:)`, and gives the memory back only through
/// `closeHandle(_:)`, whose callback releases that reference and frees the
/// memory. Nothing is freed from inside any other callback. An owner forgets
/// its handle pointer in `close()`, so after `close()` none of its methods
/// touch libuv and no user callback fires.
protocol HandleOwner: AnyObject {
    /// Closes the handle the way a user would; `EventLoop.shutdown()` calls it for stragglers.
    /// Must be called on the loop thread.
    func close()
}

/// Allocates zeroed, uninitialised storage for one libuv handle or request of type `T`.
/// The memory must be given back with `freeHandleMemory(_:)`.
func allocateHandle<T>(_ type: T.Type) -> UnsafeMutablePointer<T> {
    let raw = UnsafeMutableRawPointer.allocate(
        byteCount: MemoryLayout<T>.size, alignment: MemoryLayout<T>.alignment)
    raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<T>.size)
    return raw.bindMemory(to: T.self, capacity: 1)
}

/// Frees memory obtained from `allocateHandle(_:)`.
func freeHandleMemory<T>(_ pointer: UnsafeMutablePointer<T>) {
    UnsafeMutableRawPointer(pointer).deallocate()
}

/// Views any libuv handle struct as the generic `uv_handle_t` it starts with.
func asHandle<T>(_ pointer: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<uv_handle_t> {
    UnsafeMutablePointer<uv_handle_t>(OpaquePointer(pointer))
}

/// Views a `uv_tcp_t` or `uv_pipe_t` as the `uv_stream_t` it starts with.
func asStream<T>(_ pointer: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<uv_stream_t> {
    UnsafeMutablePointer<uv_stream_t>(OpaquePointer(pointer))
}

extension HandleOwner {
    /// Makes the handle keep its owner alive until the close callback runs.
    func adopt(_ handle: UnsafeMutablePointer<uv_handle_t>) {
        handle.pointee.data = Unmanaged<AnyObject>.passRetained(self).toOpaque()
    }
}

/// Returns the owner stored in `handle.data`, without changing its retain count.
/// Returns nil for handles that are not owned by a `HandleOwner` (the loop's own idle handle).
func owner(of handle: UnsafeMutablePointer<uv_handle_t>) -> HandleOwner? {
    guard let data = handle.pointee.data else { return nil }
    return Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? HandleOwner
}

/// Returns the `T` stored in `handle.data` by `adopt(_:)`, without a dynamic cast or a retain.
/// Only for callbacks that `T` registered on its own handle, where the type is known;
/// returns nil once the handle has been closed.
func handleOwner<T: HandleOwner>(_ handle: UnsafeMutablePointer<uv_handle_t>, as _: T.Type) -> T? {
    guard let data = handle.pointee.data else { return nil }
    return Unmanaged<T>.fromOpaque(data).takeUnretainedValue()
}

/// Starts closing an adopted handle; does nothing if it is already closing.
/// Must be called on the loop thread.
func closeHandle(_ handle: UnsafeMutablePointer<uv_handle_t>) {
    if uv_is_closing(handle) == 0 {
        uv_close(handle, handleClosed)
    }
}

/// Closes a handle that was initialised but never adopted (setup failed half-way);
/// its memory is freed in the close callback.
/// Must be called on the loop thread.
func closeUnadopted(_ handle: UnsafeMutablePointer<uv_handle_t>) {
    uv_close(handle) { handle in
        if let handle { freeHandleMemory(handle) }
    }
}

/// The one close callback for adopted handles: free the handle memory and
/// drop the self-reference (which may deinitialise the owner).
private func handleClosed(_ handle: UnsafeMutablePointer<uv_handle_t>?) {
    guard let handle, let data = handle.pointee.data else { return }
    handle.pointee.data = nil
    freeHandleMemory(handle)
    Unmanaged<AnyObject>.fromOpaque(data).release()
}
