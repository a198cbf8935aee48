import NavSyncCore
import NavSyncWeb

/// The hub behind the door's port in its unit tests: answers set by the
/// test, and a record of what the door asked.
final class FakeWebHub: WebHubPort {
    var storeIsAvailable = true
    var maxPendingOutputBytes = 1 << 20
    var sessionEnd: WebSessionEnd?
    /// The grant a request's token comes to; `token` set means only that token grants it.
    var grant = Grant.unrestricted
    var token: String?
    var rooms: [String: RoomState] = [:]
    private(set) var bearers: [String?] = []
    private(set) var finishedBecause: [String] = []
    private(set) var outputsOutsideLines = 0
    var members: [String: [Member]] = [:]
    /// Each `act`: the grant, token and room a request acted for.
    private(set) var acted: [(grant: Grant, token: String?, room: String)] = []

    func credential(bearer token: String?) -> Credential {
        bearers.append(token)
        guard let expected = self.token else { return .granted(grant) }
        guard let token else { return .missing }
        return token == expected ? .granted(grant) : .wrong
    }

    func roomRevisions(visibleTo grant: Grant) -> [(name: String, revision: UInt64)] {
        rooms.keys.sorted().filter { grant.covers($0) }.map { ($0, rooms[$0]!.revision) }
    }

    func roomState(_ name: String) -> RoomState { rooms[name] ?? RoomState(stack: [], revision: 0) }

    func metricsText() -> String { "navsync_fake 1\n" }

    /// As the hub does: the session is ending from now on.
    func finish(because why: String) {
        finishedBecause.append(why)
        if sessionEnd == nil { sessionEnd = .other }
    }

    func outputQueuedOutsideLines() { outputsOutsideLines += 1 }

    func members(of room: String) -> [Member] { members[room] ?? [] }

    func roomState(_ name: String, at revision: UInt64) -> RoomState? {
        rooms[name].flatMap { $0.revision == revision ? $0 : nil }
    }

    func act(for grant: Grant, token: String?, in room: String) { acted.append((grant, token, room)) }
}
