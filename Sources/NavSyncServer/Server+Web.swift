import Foundation
import NavSyncCore

/// What the HTTP front door asks of the server (`/metrics` is in
/// Server+Figures.swift): a room for `/rooms/NAME`, the token, and ending a
/// session that never spoke the line protocol. Nothing here runs on the line protocol's path.
extension Server {
    /// True when connections must `AUTH` (and `/metrics`, `/rooms` need a Bearer token).
    public var requiresToken: Bool { config.token != nil }

    public func acceptsToken(_ token: String) -> Bool {
        guard let expected = config.token else { return true }
        return Self.constantTimeEqual(Array(token.utf8), Array(expected.utf8))
    }

    /// Why the session is ending, once it is; the WebSocket front door turns
    /// it into a close code.
    public func endReason(of session: Session) -> CloseReason? { session.endReason }

    /// Ends a session whose connection closes for its own reasons (an HTTP
    /// exchange that is over): it leaves the count and is closed gracefully,
    /// with nothing queued for it.
    public func finish(_ session: Session, because reason: CloseReason) {
        guard !session.isClosing else { return }
        session.outbox.removeAll()
        session.outboxBytes = 0
        session.endReason = reason
        finishEnding(session, graceful: true)
    }

    /// The room as JSON: `{"room","rev","route","stack","sheets"}` in that
    /// order, entries bottom first, `data` absent when there is none. The
    /// name must be valid.
    public func roomJSON(_ name: String) -> [UInt8] {
        Array(RoomDocument.json(room: name, state: state(of: name)).utf8)
    }
}

/// `/rooms/NAME`'s body. Foundation's encoder on Linux writes an object's
/// keys in no fixed order (or sorted), so the object is put together here
/// in the order the contract shows, and only the strings go through Codable
/// (which escapes them).
enum RoomDocument {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    static func json(room: String, state: RoomState) -> String {
        "{\"room\":\(quoted(room)),\"rev\":\(state.revision),\"route\":\(quoted(state.route)),"
            + "\"stack\":\(entries(state.stack)),\"sheets\":\(entries(state.sheets))}"
    }

    private static func entries(_ entries: [RouteEntry]) -> String {
        "[" + entries.map { entry in
            "{\"screen\":\(quoted(entry.screen))" + (entry.data.map { ",\"data\":\(quoted($0))" } ?? "") + "}"
        }.joined(separator: ",") + "]"
    }

    /// A JSON string literal; encoding a String cannot fail.
    private static func quoted(_ text: String) -> String {
        String(decoding: (try? encoder.encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
    }
}
