import UVLoop

/// How every mode of `navsync` begins: one libuv loop, and SIGPIPE ignored so
/// a daemon that vanishes mid-write is an error to report, not a dead client.
enum ClientLoop {
    /// The loop, or nil after saying why it could not start.
    static func start() -> EventLoop? {
        do {
            let loop = try EventLoop()
            EventLoop.ignoreSIGPIPE()
            return loop
        } catch {
            Output.complain("cannot start the event loop: \(error)")
            return nil
        }
    }
}
