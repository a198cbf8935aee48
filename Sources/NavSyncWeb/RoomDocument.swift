import Foundation
import NavSyncCore

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

    static func list(_ rooms: [(name: String, revision: UInt64)]) -> String {
        "{\"rooms\":[" + rooms.map { "{\"room\":\(quoted($0.name)),\"rev\":\($0.revision)}" }.joined(separator: ",") + "]}"
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
