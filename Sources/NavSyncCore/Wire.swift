/// Builds the server's lines. Each function returns complete lines ending in a
/// bare `\n`, as bytes ready to queue; an event is built once and the same
/// array is handed to every watcher.
public enum Wire {
    public static func ok(_ revision: UInt64) -> [UInt8] { line("OK \(revision)") }

    public static func state(_ state: RoomState) -> [UInt8] {
        line("STATE \(state.revision) \(state.route)")
    }

    /// The answer to `WATCH <rev>` when the missed events follow.
    public static func continued(after revision: UInt64) -> [UInt8] { line("CONTINUE \(revision)") }

    /// Sent unasked to watchers after a reload changed the catalog.
    public static let catalogChanged: [UInt8] = line("CATALOG")

    public static func event(_ state: RoomState, op: String) -> [UInt8] {
        line("EVENT \(state.revision) \(op) \(state.route)")
    }

    public static func error(_ error: ProtocolError) -> [UInt8] {
        line("ERR \(error.code.rawValue) \(singleLine(error.message))")
    }

    public static func pong(_ text: String) -> [UInt8] { line(text.isEmpty ? "PONG" : "PONG \(text)") }

    public static func hello(serverVersion: String) -> [UInt8] { line("HELLO navsync 1 \(serverVersion)") }

    public static let bye: [UInt8] = line("BYE")

    /// `WHOAMI`'s answer: `YOU <id> <name> <role> <rooms>`; the name
    /// is the one `NAME` set, else the grant's.
    public static func you(id: String, name: String? = nil, grant: Grant) -> [UInt8] {
        line("YOU \(id) \(name ?? grant.name) \(grant.role.rawValue) \(grant.roomsText)"
             + (grant.lifetime.map { " \($0.wholeSeconds)" } ?? ""))
    }

    public static func screens(_ catalog: Catalog) -> [UInt8] {
        var text = ""
        for s in catalog.screens {
            text += "SCREEN \(s.name) \(s.color.rawValue) \(s.next ?? "-") \(s.data.rawValue) \(singleLine(s.title))\n"
        }
        return Array((text + "END\n").utf8)
    }

    /// `MESSAGE <name> <message>` for each screen that has one, then `END`.
    public static func messages(_ catalog: Catalog) -> [UInt8] {
        var text = ""
        for s in catalog.screens where !s.message.isEmpty {
            text += "MESSAGE \(s.name) \(singleLine(s.message))\n"
        }
        return Array((text + "END\n").utf8)
    }

    /// `ROOM <name> <rev> <route>` for each room given, in that order, then `END`.
    public static func rooms(_ rooms: [(name: String, state: RoomState)]) -> [UInt8] {
        var text = ""
        for (name, state) in rooms { text += "ROOM \(name) \(state.revision) \(state.route)\n" }
        return Array((text + "END\n").utf8)
    }

    public static func stats(_ figures: [(key: String, value: String)]) -> [UInt8] {
        var text = ""
        for (key, value) in figures { text += "STAT \(key) \(singleLine(value))\n" }
        return Array((text + "END\n").utf8)
    }

    public static func help() -> [UInt8] {
        Array((Verb.helpLines.joined(separator: "\n") + "\nEND\n").utf8)
    }

    /// Messages may quote client input; a line break there would forge a line.
    static func singleLine(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 10 || $0 == 13 }) else { return text }
        return String(text.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 })
    }

    @inline(__always)
    static func line(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}
