/// How long to wait before reconnecting: exponential, capped, with "equal
/// jitter" — half of the step is fixed and half is random, so clients that
/// lost the same daemon at the same moment do not all come back at once, yet
/// none retries sooner than half the step.
public struct ReconnectBackoff: Sendable, Equatable {
    /// The step before the first retry.
    public var initialMilliseconds: UInt64
    /// No wait is ever longer than this.
    public var maximumMilliseconds: UInt64

    public init(initialMilliseconds: UInt64 = 200, maximumMilliseconds: UInt64 = 3000) {
        precondition(initialMilliseconds > 0 && maximumMilliseconds >= initialMilliseconds)
        self.initialMilliseconds = initialMilliseconds
        self.maximumMilliseconds = maximumMilliseconds
    }

    /// The range the wait is drawn from after `failures` consecutive failed
    /// attempts (1 for the first retry): up to the capped step, at least half of it.
    public func bounds(failures: Int) -> ClosedRange<UInt64> {
        let doublings = min(max(failures - 1, 0), 32)
        let step = min(maximumMilliseconds, initialMilliseconds << UInt64(doublings))
        return (step / 2)...step
    }

    public func delay(failures: Int, using random: inout some RandomNumberGenerator) -> UInt64 {
        UInt64.random(in: bounds(failures: failures), using: &random)
    }
}
