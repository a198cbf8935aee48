import UVLoop

extension EventLoop {
    /// Runs the loop until `done` holds (checked every millisecond) or
    /// `milliseconds` pass: the bounded wait of a test whose Redis
    /// connections live on this loop.
    public func runUntil(upTo milliseconds: UInt64 = 20_000, _ done: @escaping () -> Bool) {
        let deadline = LoopTimer(loop: self)
        deadline.start(afterMilliseconds: milliseconds) { [unowned self] in self.stop() }
        let check = LoopTimer(loop: self)
        check.start(afterMilliseconds: 1, repeatMilliseconds: 1) { [unowned self] in if done() { self.stop() } }
        run()
        deadline.close()
        check.close()
    }
}
