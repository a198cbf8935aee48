/// How long the store waits before its next attempt to reach Redis: twice
/// as long after each failed attempt, up to a cap, back to the shortest
/// once up; a Redis that answered `LOADING` (up, reading its AOF or
/// snapshot) is asked again soon without backing off, since it will be
/// ready any moment and every millisecond after that is a wait for the
/// fleet's watchers and writers.
struct ReconnectBackoff: Equatable {
    static let firstMilliseconds: UInt64 = 50
    static let maxMilliseconds: UInt64 = 1_000
    static let loadingMilliseconds: UInt64 = 20

    private var delay = firstMilliseconds
    /// The last attempt found Redis loading its data.
    var redisIsLoading = false

    /// Redis answered: the next outage starts from the shortest wait.
    mutating func reset() {
        delay = Self.firstMilliseconds
    }

    /// The wait before the next attempt.
    mutating func nextDelay() -> UInt64 {
        if redisIsLoading {
            redisIsLoading = false
            return Self.loadingMilliseconds
        }
        defer { delay = min(delay * 2, Self.maxMilliseconds) }
        return delay
    }
}
