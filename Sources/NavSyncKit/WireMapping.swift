import NavSyncClient
import NavSyncCore

/// The border between the program's screens and the protocol's entries:
/// routes from the daemon become `Screen` values (or an error naming the
/// entry the type refused), and mutations become request lines, checked
/// before anything is sent.
enum WireMapping {
    /// Each entry through `Screen.init?(screen:data:)`; the first refused one fails the whole list.
    static func screens<Screen: NavScreen>(_ entries: [RouteEntry], as _: Screen.Type) -> Result<[Screen], Refusal> {
        var screens: [Screen] = []
        screens.reserveCapacity(entries.count)
        for entry in entries {
            guard let screen = Screen(screen: entry.screen, data: entry.data) else { return .failure(Refusal(entry: entry)) }
            screens.append(screen)
        }
        return .success(screens)
    }

    /// An entry `Screen.init?` refused, for the error and the `.failed` text.
    struct Refusal: Error, Equatable {
        var entry: RouteEntry

        var reason: String {
            let data = entry.data.map { " with data \"\($0)\"" } ?? " without data"
            return "the room shows screen \(entry.screen)\(data), which this program's screen type refuses"
        }
    }

    /// A screen as the wire will carry it: the name checked against the
    /// catalog's name rule, the data trimmed (empty is none) and free of line breaks.
    static func entry(_ screen: some NavScreen) throws(NavSyncError) -> RouteEntry {
        let name = screen.screen
        guard Names.isValid(name) else {
            throw .invalidData("\"\(name)\" is not a screen name (1 to 64 of A-Z a-z 0-9 _ . -)")
        }
        return RouteEntry(screen: name, data: try data(screen.data))
    }

    /// Data as the daemon will store it, or `invalidData` for a line break.
    static func data(_ data: String?) throws(NavSyncError) -> String? {
        guard let normalized = NavEntry.normalized(data) else { return nil }
        if RequestArguments.holdsLineBreak(normalized) {
            throw .invalidData("data cannot hold a line break (\\r or \\n)")
        }
        return normalized
    }

    /// The request for a mutation, or `invalidData` when it cannot be one line.
    static func request<Screen: NavScreen>(_ mutation: NavMutation<Screen>) throws(NavSyncError) -> ClientRequest {
        switch mutation {
        case .select(let screen):
            let entry = try entry(screen)
            return .select(screen: entry.screen, data: entry.data)
        case .push(let screen):
            let entry = try entry(screen)
            return .push(screen: entry.screen, data: entry.data)
        case .present(let screen):
            let entry = try entry(screen)
            return .present(screen: entry.screen, data: entry.data)
        case .dismiss: return .dismiss
        case .pop: return .pop
        case .root: return .root
        case .next(let text): return .next(data: try data(text))
        case .open(let stack, let sheets):
            guard !stack.isEmpty else { throw .invalidData("a stack holds at least one screen") }
            var stackEntries: [RouteEntry] = []
            for screen in stack { stackEntries.append(try entry(screen)) }
            var sheetEntries: [RouteEntry] = []
            for screen in sheets { sheetEntries.append(try entry(screen)) }
            return .open(route: Route.encode(stackEntries, sheets: sheetEntries))
        }
    }
}
