/// A screen of the program's own: usually an enum whose cases are the
/// screens of the daemon's catalog and whose associated values are their
/// data, the way seed 002 writes `case viewB(someData: String)`.
///
/// The library turns every entry of a route into a `Screen` with
/// `init?(screen:data:)` and sends `screen` and `data` back on the wire. A
/// conformance should round-trip: `Self(screen: s.screen, data: s.data) == s`.
///
/// Data travels the way the protocol carries it: leading and trailing
/// blanks (spaces and tabs) are trimmed and empty data is no data. A type
/// that keeps data should map `""` and `nil` to the same value, or a screen
/// it sent may come back as a different value.
public protocol NavScreen: Hashable, Sendable {
    /// Makes the screen for one route entry; nil when `screen` (or its data)
    /// is not one of this type's screens. The library never guesses: a
    /// refused entry puts a `SharedNavigation` in `.failed`.
    init?(screen: String, data: String?)
    /// The catalog name sent on the wire: 1 to 64 of `A-Z a-z 0-9 _ . -`.
    var screen: String { get }
    /// The entry's data, or nil for none. It may not hold `\r` or `\n`.
    var data: String? { get }
}

/// A screen name and its data as the daemon reports them: the ready-made
/// `NavScreen` for a program that has no enum of its own (a tool, a test, a
/// bridge). It accepts every screen, so it never fails a route.
public struct NavEntry: NavScreen, CustomStringConvertible {
    /// The catalog name, as on the wire.
    public let screen: String
    /// The data with blanks trimmed; nil for none (never empty).
    public let data: String?

    /// Makes an entry; data is trimmed the way the protocol trims it, and
    /// empty data becomes nil. Never fails, so it also stands for
    /// `NavScreen`'s `init?(screen:data:)`: every screen is a `NavEntry`.
    public init(screen: String, data: String? = nil) {
        self.screen = screen
        self.data = NavEntry.normalized(data)
    }

    /// The same, without the label: `NavEntry("blue", data: "hello")`.
    public init(_ screen: String, data: String? = nil) {
        self.init(screen: screen, data: data)
    }

    /// `name` or `name:data`, as an entry reads in a route (without escaping).
    public var description: String {
        data.map { "\(screen):\($0)" } ?? screen
    }

    /// Data as the daemon will store it: blanks trimmed at both ends, empty is none.
    static func normalized(_ data: String?) -> String? {
        guard let data else { return nil }
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = data.firstIndex(where: { !isBlank($0) }),
              let last = data.lastIndex(where: { !isBlank($0) }) else { return nil }
        return String(data[first...last])
    }
}
