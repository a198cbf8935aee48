/// How many objects of one kind are alive right now. Each object counts
/// itself in on creation and out in its `deinit`, so the figure falls only
/// when the memory is really given back: a reference cycle that keeps a
/// closed connection alive shows up here (STATS `live_sessions`,
/// `live_links`) long before it shows in the daemon's RSS.
/// Must be used on the loop thread only.
public final class LiveCount {
    public private(set) var value = 0

    public init() {}

    public func increment() { value += 1 }
    public func decrement() { value -= 1 }
}
