/// The eight colours every terminal understands; a catalog may use no other.
public enum ScreenColor: String, Sendable, CaseIterable, Codable {
    case black, red, green, yellow, blue, magenta, cyan, white
}

/// Whether a screen carries data, like an enum case with or without an
/// associated value.
public enum DataRule: String, Sendable, CaseIterable, Codable {
    case none, optional, required
}

/// One member of the closed set of screens a room's stack may hold.
public struct Screen: Sendable, Equatable {
    public var name: String
    public var title: String
    public var color: ScreenColor
    public var message: String
    /// The screen `NEXT` moves to; nil means `NEXT` answers `no-next`.
    public var next: String?
    public var data: DataRule

    public init(name: String, title: String, color: ScreenColor, message: String = "",
                next: String? = nil, data: DataRule = .none) {
        self.name = name
        self.title = title
        self.color = color
        self.message = message
        self.next = next
        self.data = data
    }

    /// Checks data given for this screen against its rule; nil when it fits.
    /// Empty data counts as no data.
    public func dataProblem(_ data: String?) -> String? {
        switch (self.data, data) {
        case (.none, .some):
            return "screen \(name) takes no data"
        case (.required, .none):
            return "screen \(name) requires data"
        default:
            return nil
        }
    }
}
