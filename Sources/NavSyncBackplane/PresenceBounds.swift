import NavSyncCore

/// What presence read from Redis must fit, so a member of another
/// daemon is held to the rules a member of this one is: its `<at>` is `-`
/// or a route that parses, is written the way a daemon writes routes, and
/// would fit an `AT` line under this daemon's `--max-line` and
/// `--max-depth`. Screens are not looked up in the catalog: `<at>` is only
/// shown, and another daemon may be between catalogs.
struct PresenceBounds: Sendable, Equatable {
    /// `--max-line`: an `AT <route>` line must fit in it.
    var maxLineBytes: Int
    /// `--max-depth`: stack and sheets of the route together.
    var maxDepth: Int

    /// A message read from the presence channel larger than this is
    /// dropped whole, before any line of it is read.
    static let maxMessageBytes = 1 << 20
    /// A daemon splits its turn's changes into messages of at most this.
    static let maxPublishedBytes = 64 << 10

    /// Why `route` may not be a member's `<at>`; nil when it may.
    func routeProblem(_ route: String) -> PresenceMessage.Problem? {
        let bytes = route.utf8.count
        // "AT " + route must fit a line, as for a member of this daemon.
        guard 3 + bytes <= maxLineBytes else { return .routeTooLong(bytes: bytes) }
        let navigation: Navigation
        switch Route.decode(route) {
        case .success(let decoded): navigation = decoded
        case .failure(let error): return .badRoute(error)
        }
        guard navigation.depth <= maxDepth else { return .routeTooDeep(depth: navigation.depth) }
        // A daemon always writes a route through `Route.encode`, which
        // escapes every byte outside the unreserved ones; what it decodes to
        // may hold anything, so only that form is shown to anyone.
        guard Route.encode(navigation) == route else { return .routeNotCanonical }
        return nil
    }
}
