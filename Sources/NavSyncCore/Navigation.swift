/// What a room shows: the navigation stack, and the sheets presented
/// modally over it, like SwiftUI's `.sheet` over a `NavigationStack`. Both
/// are bottom first; the last sheet, if any, is what the user looks at.
public struct Navigation: Sendable, Equatable, Hashable, ExpressibleByArrayLiteral {
    public var stack: [RouteEntry]
    public var sheets: [RouteEntry]

    public init(stack: [RouteEntry], sheets: [RouteEntry] = []) {
        self.stack = stack
        self.sheets = sheets
    }

    /// A stack with no sheets, as every version-1 route is.
    public init(arrayLiteral entries: RouteEntry...) {
        self.init(stack: entries)
    }

    /// Entries of the stack and the sheets together: what `--max-depth` bounds.
    public var depth: Int { stack.count + sheets.count }
}
