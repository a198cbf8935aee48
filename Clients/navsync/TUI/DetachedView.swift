import NavSyncClient
import NavSyncCore

/// What a detached terminal client shows: its own navigation, moved by
/// its own keys and never by the room. A change the keys ask for is read
/// with the daemon's own parser and applied with the daemon's own reducer
/// against the catalog the daemon sent, so browsing privately follows the
/// same rules as steering (data rules, `at-root`, `no-next`); the daemon
/// only hears `AT <route>`.
struct DetachedView: Equatable {
    /// What this client shows; its revision is the room's when it detached.
    private(set) var state: RoomState

    init(from room: RoomState) { state = room }

    /// The deepest route the client builds on its own; the daemon's `AT`
    /// judges its own `--max-depth` and answers `limit` past it.
    static let maxDepth = Limits().maxDepth

    /// Applies the change `request` asks for. Returns true when what is shown
    /// changed, false for a change that leaves it as it is; throws what the
    /// daemon would have answered.
    mutating func apply(_ request: ClientRequest, catalog entries: [CatalogEntry]) throws(ProtocolError) -> Bool {
        guard let catalog = Self.catalog(entries) else {
            throw ProtocolError(.unknownScreen, "the catalog has not arrived yet")
        }
        let parser = CommandParser(catalog: catalog, maxDepth: Self.maxDepth)
        guard case .success(.mutate(let mutation, nil))? = parser.parse(Array(request.line.utf8)) else {
            if case .failure(let error)? = parser.parse(Array(request.line.utf8)) { throw error }
            return false
        }
        guard let changed = try Reducer.apply(mutation, to: state, catalog: catalog, maxDepth: Self.maxDepth) else {
            return false
        }
        state = RoomState(changed.navigation, revision: state.revision)
        return true
    }

    /// The daemon's catalog as the core's type; nil before it arrived (or if it makes no catalog).
    private static func catalog(_ entries: [CatalogEntry]) -> Catalog? {
        guard let first = entries.first else { return nil }
        let screens = entries.map { entry in
            Screen(name: entry.name, title: entry.title, color: entry.color ?? .white, message: entry.message ?? "",
                   next: entry.next, data: entry.data)
        }
        return try? Catalog(initial: first.name, screens: screens)
    }
}
