/// What one room holds: a non-empty stack whose last entry is the presented
/// screen, and a revision that grows by exactly one per change.
public struct RoomState: Sendable, Equatable {
    public var stack: [RouteEntry]
    public var revision: UInt64

    public init(stack: [RouteEntry], revision: UInt64) {
        self.stack = stack
        self.revision = revision
    }

    public var route: String { Route.encode(stack) }
}
