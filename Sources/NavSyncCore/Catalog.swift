/// The closed set of screens, with the one a fresh room starts on.
/// Invariants (checked by `init`): names are valid (and not `-`) and unique,
/// titles and messages are one line without control characters, every
/// `next` names a member, and `initial` is a member that needs no data.
public struct Catalog: Sendable, Equatable {
    public let initial: String
    /// In the order they were declared, which is the order `SCREENS` lists.
    public let screens: [Screen]
    private let index: [String: Int]

    public init(initial: String, screens: [Screen]) throws(CatalogError) {
        guard !screens.isEmpty else { throw CatalogError(field: "screens", problem: "must list at least one screen") }
        var index: [String: Int] = [:]
        for (i, screen) in screens.enumerated() {
            guard Names.isValid(screen.name) else {
                throw CatalogError(field: "screens[\(i)].name",
                                   problem: "\"\(screen.name)\" must be 1-64 characters of A-Z a-z 0-9 _ . -")
            }
            guard screen.name != "-" else {
                throw CatalogError(field: "screens[\(i)].name",
                                   problem: "\"-\" is not a screen name: SCREENS writes it for a screen with no next")
            }
            for (field, text) in [("title", screen.title), ("message", screen.message)] {
                if let problem = Self.singleLineProblem(text) {
                    throw CatalogError(field: "screens[\(i)].\(field)", problem: problem)
                }
            }
            guard index[screen.name] == nil else {
                throw CatalogError(field: "screens[\(i)].name", problem: "\"\(screen.name)\" is listed twice")
            }
            index[screen.name] = i
        }
        for (i, screen) in screens.enumerated() {
            if let next = screen.next, index[next] == nil {
                throw CatalogError(field: "screens[\(i)].next", problem: "\"\(next)\" is not a screen of this catalog")
            }
        }
        guard let start = index[initial] else {
            throw CatalogError(field: "initial", problem: "\"\(initial)\" is not a screen of this catalog")
        }
        guard screens[start].data != .required else {
            throw CatalogError(field: "initial", problem: "\"\(initial)\" requires data, so no room could start on it")
        }
        self.initial = initial
        self.screens = screens
        self.index = index
    }

    /// Titles and messages are sent as the rest of one protocol line
    /// (`SCREEN`, `MESSAGE`) and drawn on one terminal row: a line break or
    /// any other control character (Unicode's Cc, and the line and paragraph
    /// separators) would break the line or the screen.
    static func singleLineProblem(_ text: String) -> String? {
        guard let bad = text.unicodeScalars.first(where: { scalar in
            scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}"
        }) else { return nil }
        let code = String(bad.value, radix: 16, uppercase: true)
        return "must be one line with no control characters (holds U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code))"
    }

    public subscript(name: String) -> Screen? {
        index[name].map { screens[$0] }
    }

    /// The stack of a room that has never been changed.
    public var initialStack: [RouteEntry] { [RouteEntry(screen: initial)] }

    /// red → green → blue → red, the catalog a daemon uses without `--screens`.
    public static let builtIn: Catalog = {
        // The literal below satisfies every invariant, so this cannot throw.
        try! Catalog(initial: "red", screens: [
            Screen(name: "red", title: "Red", color: .red,
                   message: "Everything starts here.", next: "green", data: .none),
            Screen(name: "green", title: "Green", color: .green,
                   message: "One step further.", next: "blue", data: .none),
            Screen(name: "blue", title: "Blue", color: .blue,
                   message: "Carries a note if you give it one.", next: "red", data: .optional),
        ])
    }()
}

/// What is wrong with a catalog, located by a JSON path such as `screens[2].color`.
public struct CatalogError: Error, Equatable, CustomStringConvertible {
    public var field: String
    public var problem: String

    public init(field: String, problem: String) {
        self.field = field
        self.problem = problem
    }

    public var description: String { field.isEmpty ? problem : "\(field): \(problem)" }
}
