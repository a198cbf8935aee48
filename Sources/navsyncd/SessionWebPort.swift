import NavSyncCore
import NavSyncServer
import NavSyncWeb

/// The web door's port (`WebHubPort`) for one session: what an HTTP
/// exchange asks of the hub, said in the hub's own calls. The door holds
/// it until its connection closes; it holds the session, so the door's
/// `close` letting go of it is part of the link's one teardown.
/// Must be used on the loop thread only.
final class SessionWebPort: WebHubPort {
    private let server: Server
    private let session: Session
    /// The connection's peer, as the guessing throttle counts it.
    private let peer: PeerAddress

    init(server: Server, session: Session, peer: PeerAddress) {
        self.server = server
        self.session = session
        self.peer = peer
    }

    var storeIsAvailable: Bool { server.storeIsAvailable }

    var maxPendingOutputBytes: Int { server.maxPendingOutputBytes }

    var sessionEnd: WebSessionEnd? {
        switch server.endReason(of: session) {
        case nil: return nil
        case .authFailed?: return .authFailed
        case .tokenRevoked?: return .tokenRevoked
        case .tokenExpired?: return .tokenExpired
        case .shutdown?: return .shutdown
        case .busy?: return .busy
        case .transportError?: return .transportError
        case .peerClosed?, .quit?, .web?: return .other
        }
    }

    func credential(bearer token: String?) -> Credential {
        server.access.credential(bearer: token, from: peer, label: server.label(of: session))
    }

    func roomRevisions(visibleTo grant: Grant) -> [(name: String, revision: UInt64)] {
        server.roomRevisions(visibleTo: grant)
    }

    func roomState(_ name: String) -> RoomState { server.roomState(name) }

    func metricsText() -> String { server.metricsText() }

    func finish(because why: String) { server.finish(session, because: .web(why)) }

    func outputQueuedOutsideLines() { server.outputQueuedOutsideLines(for: session) }

    func members(of room: String) -> [Member] { server.roomMembers(room) }

    func roomState(_ name: String, at revision: UInt64) -> RoomState? { server.roomState(name, at: revision) }

    func act(for grant: Grant, token: String?, in room: String) {
        server.act(session, for: grant, token: token, in: room)
    }
}
