import Foundation
import NavSyncCore

/// What the HTTP front door asks of the server: figures for `/metrics`, a
/// room for `/rooms/NAME`, the token, and ending a session that never spoke
/// the line protocol. Nothing here runs on the line protocol's path.
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

    /// A figure for `/metrics` beyond the server's own (the front door's counts).
    public struct Metric {
        public var name: String
        public var help: String
        public var type: String
        public var value: String

        public init(name: String, help: String, type: String, value: String) {
            self.name = name
            self.help = help
            self.type = type
            self.value = value
        }
    }

    /// Prometheus text exposition (version 0.0.4). Names and meanings are
    /// the contract's, the same figures as `STATS`.
    public func metricsText(extra: [Metric] = []) -> String {
        let escapedVersion = config.version.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"")
        let figures: [Metric] = [
            Metric(name: "navsync_connections", help: "Open connections of every kind (TCP, Unix, HTTP, WebSocket).",
                   type: "gauge", value: String(sessions.count)),
            Metric(name: "navsync_watchers", help: "Watching connections in all rooms.",
                   type: "gauge", value: String(watchersTotal)),
            Metric(name: "navsync_rooms", help: "Rooms that have been changed at least once.",
                   type: "gauge", value: String(roomsWithState)),
            Metric(name: "navsync_changes_total", help: "New revisions made through this daemon.",
                   type: "counter", value: String(changesMade)),
            Metric(name: "navsync_events_out_total", help: "EVENT lines handed to connections, less those later dropped for a slow watcher.",
                   type: "counter", value: String(eventsOut)),
            Metric(name: "navsync_resyncs_total", help: "STATE lines sent because a watcher fell behind.",
                   type: "counter", value: String(resyncs)),
            Metric(name: "navsync_commands_total", help: "Command lines answered, errors included.",
                   type: "counter", value: String(commandsHandled)),
            Metric(name: "navsync_uptime_seconds", help: "Seconds since the daemon started.",
                   type: "gauge", value: String(uptimeSeconds)),
            Metric(name: "navsync_max_clients", help: "The --max-clients limit.",
                   type: "gauge", value: String(limits.maxClients)),
            Metric(name: "navsync_build_info", help: "The daemon's version, as a label.",
                   type: "gauge", value: "1"),
        ] + extra
        var text = ""
        for metric in figures {
            text += "# HELP \(metric.name) \(metric.help)\n# TYPE \(metric.name) \(metric.type)\n"
            let labels = metric.name == "navsync_build_info" ? "{version=\"\(escapedVersion)\"}" : ""
            text += "\(metric.name)\(labels) \(metric.value)\n"
        }
        return text
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
