import NavSyncCore

/// The JSON documents of a room the HTTP API serves: the room itself
/// (`/rooms/NAME`, a server-sent `state` event), its members, and the list
/// of rooms. Members appear in the order the contract shows them.
enum RoomDocument {
    /// `{"room","rev","route","stack","sheets"}`, entries bottom first,
    /// `data` absent when there is none. The name must be valid.
    static func json(room: String, state: RoomState) -> String {
        "{\"room\":\(JSONText.quoted(room)),\"rev\":\(state.revision),\"route\":\(JSONText.quoted(state.route)),"
            + "\"stack\":\(entries(state.stack)),\"sheets\":\(entries(state.sheets))}"
    }

    /// `{"rooms":[{"room":…,"rev":…},…]}` in the order given.
    static func list(_ rooms: [(name: String, revision: UInt64)]) -> String {
        "{\"rooms\":[" + rooms.map { "{\"room\":\(JSONText.quoted($0.name)),\"rev\":\($0.revision)}" }
            .joined(separator: ",") + "]}"
    }

    /// `{"room":…,"members":[{"id","name","role","at"},…]}` in the order
    /// given (`WHO`'s); `at` is null while a member follows the room.
    static func members(room: String, _ members: [Member]) -> String {
        "{\"room\":\(JSONText.quoted(room)),\"members\":[" + members.map { member in
            "{\"id\":\(JSONText.quoted(member.id)),\"name\":\(JSONText.quoted(member.name)),"
                + "\"role\":\(JSONText.quoted(member.role.rawValue)),\"at\":\(member.at.map(JSONText.quoted) ?? "null")}"
        }.joined(separator: ",") + "]}"
    }

    private static func entries(_ entries: [RouteEntry]) -> String {
        "[" + entries.map { entry in
            "{\"screen\":\(JSONText.quoted(entry.screen))" + (entry.data.map { ",\"data\":\(JSONText.quoted($0))" } ?? "") + "}"
        }.joined(separator: ",") + "]"
    }
}
