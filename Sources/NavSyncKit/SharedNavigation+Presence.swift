import NavSyncClient
import NavSyncCore

/// Who else is here: the object follows `PRESENCE` itself, so
/// `members` and `me` change on the main actor as people arrive, look
/// elsewhere and leave; `look(at:)` and `follow()` say where this object
/// looks (`AT`), which changes nothing in the room.
extension SharedNavigation {
    /// Says that this object looks at `stack` (and `sheets`) on its own,
    /// detached from the room (`AT <route>`): the others see it in their
    /// `members`; the room does not change. The daemon checks the route as
    /// it checks `open` (`unknown-screen`, `bad-args`, `limit`).
    public func look(at stack: [Screen], sheets: [Screen] = []) async throws {
        guard !stack.isEmpty else { throw NavSyncError.invalidData("a stack holds at least one screen") }
        var stackEntries: [RouteEntry] = []
        for screen in stack { stackEntries.append(try WireMapping.entry(screen)) }
        var sheetEntries: [RouteEntry] = []
        for screen in sheets { sheetEntries.append(try WireMapping.entry(screen)) }
        _ = try await request(.look(at: Route.encode(stackEntries, sheets: sheetEntries)))
    }

    /// Follows the room again (`AT -`).
    public func follow() async throws {
        _ = try await request(.look(at: nil))
    }

    /// The members as the state machine last listed them; `me` is this object's own.
    func membersChanged(_ list: [Member]) {
        let members = list.map(NavMember.init)
        if members != self.members { self.members = members }
        let own = memberID.flatMap { id in members.first { $0.id == id } }
        if own != me { me = own }
    }
}
