import NavSyncCore

/// The protocol 1.1 route with sheets (`/a/b#c:data#d`), as far as the
/// library needs it until the core's route codec carries sheets: the stack
/// is the core's encoding, each sheet one more entry after a `#`.
enum RoomRoute {
    static func encode(stack: [RouteEntry], sheets: [RouteEntry]) -> String {
        var route = Route.encode(stack)
        for sheet in sheets {
            // A sheet is written as a one-entry stack with `#` in place of its `/`.
            route += "#" + Route.encode([sheet]).dropFirst()
        }
        return route
    }

    /// The sheets of a state the daemon reported; none until the core's `RoomState` carries them.
    static func sheets(of _: RoomState) -> [RouteEntry] { [] }
}
