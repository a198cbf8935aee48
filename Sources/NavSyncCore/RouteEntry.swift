/// One entry of a navigation stack: a screen name plus optional data, the way
/// an enum case may carry an associated value.
public struct RouteEntry: Sendable, Equatable, Hashable {
    public var screen: String
    /// Never empty: empty data is the same as none, so it is stored as nil.
    public var data: String?

    public init(screen: String, data: String? = nil) {
        self.screen = screen
        self.data = (data?.isEmpty ?? true) ? nil : data
    }
}
