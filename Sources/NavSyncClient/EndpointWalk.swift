/// The order in which a client tries a list of daemons (several sharing one
/// backplane): each attempt takes the next address, wrapping round, and a
/// failure moves on at once until every address has failed in a row — one
/// round — which is the only failure worth reporting. `ClientDriver` walks
/// round after round; `navsync raw` gives up after its first.
///
/// Pure bookkeeping: the caller connects and tells the walk what happened.
public struct EndpointWalk: Sendable {
    public let endpoints: [Endpoint]
    /// The address of the current (or the last) attempt; the first before any.
    public private(set) var current: Endpoint
    private var nextIndex = 0
    private var failedInARow = 0
    /// The round's first failure with its address, so a round in which
    /// every address failed can name where it started.
    private var firstFailure: String?

    /// What to do after an attempt failed.
    public enum AfterFailure: Equatable, Sendable {
        /// Another address has not been tried in this round.
        case tryNext
        /// Every address failed in a row; `first` is "address: reason" of the
        /// first of them. The next `advance` starts a new round.
        case roundFailed(first: String)
    }

    /// `endpoints` must not be empty.
    public init(_ endpoints: [Endpoint]) {
        precondition(!endpoints.isEmpty, "an endpoint walk needs at least one endpoint")
        self.endpoints = endpoints
        self.current = endpoints[0]
    }

    /// The address for the next attempt.
    public mutating func advance() -> Endpoint {
        current = endpoints[nextIndex]
        nextIndex = (nextIndex + 1) % endpoints.count
        return current
    }

    /// The attempt at `current` failed for `reason`.
    public mutating func failed(_ reason: String) -> AfterFailure {
        failedInARow += 1
        if firstFailure == nil { firstFailure = "\(current): \(reason)" }
        guard failedInARow >= endpoints.count else { return .tryNext }
        let first = firstFailure ?? reason
        failedInARow = 0
        firstFailure = nil
        return .roundFailed(first: first)
    }

    /// The attempt at `current` connected: the next failure starts a fresh round.
    public mutating func succeeded() {
        failedInARow = 0
        firstFailure = nil
    }
}
