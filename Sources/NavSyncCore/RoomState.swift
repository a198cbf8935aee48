/// What one room holds: a non-empty stack whose last entry is the presented
/// screen, the sheets over it, and a revision that grows by exactly one
/// per change.
public struct RoomState: Sendable, Equatable {
    public var stack: [RouteEntry]
    public var sheets: [RouteEntry]
    public var revision: UInt64

    public init(stack: [RouteEntry], sheets: [RouteEntry] = [], revision: UInt64) {
        self.stack = stack
        self.sheets = sheets
        self.revision = revision
    }

    public init(_ navigation: Navigation, revision: UInt64) {
        self.init(stack: navigation.stack, sheets: navigation.sheets, revision: revision)
    }

    public var navigation: Navigation { Navigation(stack: stack, sheets: sheets) }

    public var route: String { Route.encode(stack, sheets: sheets) }
}
