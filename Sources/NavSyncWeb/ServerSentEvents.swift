import NavSyncCore

/// The `text/event-stream` form of what a watcher is sent: HTML's
/// server-sent events, read by a browser's `EventSource`, `curl -N` and
/// every SSE library. An events connection is a line-protocol watcher
/// underneath; this turns the lines the hub sends it into events, so the
/// stream says exactly what a `WATCH` says (resume, resync, catalog,
/// revocation) and nothing is decided twice.
///
/// | line | event |
/// |---|---|
/// | `STATE <rev> <route>` | `id: REV`, `event: state`, the room document |
/// | `EVENT <rev> <op> <route>` | `id: REV`, `event: change`, `{"rev","op","route"}` |
/// | `CATALOG` | `event: catalog`, `{}` (no id) |
/// | `ERR forbidden <why>` | `event: denied`, `{"error":"forbidden","message":why}` |
///
/// Every other line (`OK`, `CONTINUE`, `BYE`, …) answers nothing a
/// stream's reader asked and is left out.
public enum ServerSentEvents {
    public static let contentType = "text/event-stream"
    /// Sent first on every stream: how long `EventSource` waits before it reconnects.
    public static let retryBlock: [UInt8] = Array("retry: 2000\n\n".utf8)
    /// A comment after a quiet spell, so proxies keep the connection.
    public static let ping: [UInt8] = Array(": ping\n\n".utf8)
    /// Seconds of silence before a ping.
    public static let pingAfterSeconds = 15

    /// One event block. `data` holds no line break (it is one JSON text).
    public static func event(id: UInt64?, name: String, data: String) -> String {
        (id.map { "id: \($0)\n" } ?? "") + "event: \(name)\ndata: \(data)\n\n"
    }

    public static func state(room: String, _ state: RoomState) -> String {
        event(id: state.revision, name: "state", data: RoomDocument.json(room: room, state: state))
    }

    public static func change(revision: UInt64, op: String, route: String) -> String {
        event(id: revision, name: "change",
              data: "{\"rev\":\(revision),\"op\":\(JSONText.quoted(op)),\"route\":\(JSONText.quoted(route))}")
    }

    public static let catalog = event(id: nil, name: "catalog", data: "{}")

    /// Not `error`, the name `EventSource` keeps for its own network errors.
    public static func denied(_ why: String) -> String {
        event(id: nil, name: "denied", data: JSONText.error(code: ErrorCode.forbidden.rawValue, message: why))
    }

    /// The events for whole lines of a watcher's output (each ending in
    /// `\n`; a last line without one is read as whole too).
    public static func events(ofLines bytes: some Collection<UInt8>, room: String) -> [UInt8] {
        var denied = false
        return events(ofLines: bytes, room: room, denied: &denied)
    }

    /// The same, and `denied` set when one of the lines became a `denied`
    /// event (found by its first bytes, in the same pass over the lines).
    static func events(ofLines bytes: some Collection<UInt8>, room: String, denied: inout Bool) -> [UInt8] {
        var out: [UInt8] = []
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            if line.starts(with: forbiddenPrefix) { denied = true }
            out += event(forLine: String(decoding: line, as: UTF8.self), room: room).utf8
        }
        return out
    }

    /// How a line that becomes a `denied` event begins.
    private static let forbiddenPrefix = Array("ERR \(ErrorCode.forbidden.rawValue) ".utf8)

    /// The event for one line without its `\n`; empty when it has none.
    public static func event(forLine line: String, room: String) -> String {
        switch ServerLine.parse(line) {
        case .state(let revision, let route):
            guard case .success(let navigation) = Route.decode(route) else { return "" }
            return state(room: room, RoomState(navigation, revision: revision))
        case .event(let revision, let op, let route):
            return change(revision: revision, op: op, route: route)
        case .catalogChanged:
            return catalog
        case .error(let error) where error.code == ErrorCode.forbidden.rawValue:
            return denied(error.message)
        default:
            return ""
        }
    }

    /// A watcher's output as it comes, cut anywhere: whole lines become
    /// events, a partial line waits for the rest.
    public struct Translator: Sendable {
        public let room: String
        private var partial: [UInt8] = []

        /// True once a line became a `denied` event: the stream lost its
        /// access (a room revoked leaves a line connection open, but a
        /// stream that may no longer watch has nothing left to say) and
        /// is closed after it.
        public private(set) var denied = false

        public init(room: String) { self.room = room }

        /// True while part of a line waits: output shared by the room's
        /// watchers cannot then be written as it is.
        public var holdsPartialLine: Bool { !partial.isEmpty }

        public mutating func events(from chunk: some Collection<UInt8>) -> [UInt8] {
            let output = Array(chunk)
            guard let lastBreak = output.lastIndex(of: UInt8(ascii: "\n")) else {
                partial += output
                return []
            }
            var whole = partial
            partial = []
            whole += output[...lastBreak]
            partial += output[output.index(after: lastBreak)...]
            return ServerSentEvents.events(ofLines: whole, room: room, denied: &denied)
        }
    }
}

/// The maker of a room's turn as server-sent events: one object for the
/// daemon, so each turn buffer is turned into events once for every
/// stream of its room (`SharedBytes.derived(by:)`), as a WebSocket's
/// frames are made once by `WebSocketTextWriter`.
public final class ServerSentEventWriter {
    public init() {}

    /// The events of a turn's whole lines.
    public func events(ofLines bytes: UnsafeRawBufferPointer, room: String) -> [UInt8] {
        ServerSentEvents.events(ofLines: bytes, room: room)
    }
}
