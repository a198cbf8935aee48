import RedisClient

/// A room's state hash as `HMGET` hands back its revision, route and tag.
/// Three reads take it (every room after a connect, a room resynced whole,
/// a room looked at again): each believes it only through `read`, so they
/// agree on what makes a room unreadable.
struct StoredRoomHash: Equatable {
    var revision: UInt64
    /// Empty when the room was never changed.
    var route: String
    var tag: String

    /// The command that reads it.
    static func command(_ keys: BackplaneKeys, room: String) -> [String] {
        ["HMGET", keys.state(room), "rev", "route", "tag"]
    }

    /// The hash in `reply`: three fields, the first a revision this daemon
    /// would have written (missing is 0). The route is not decoded here.
    static func read(_ reply: RedisReply) -> Result<StoredRoomHash, UnreadableRoomData> {
        guard let parts = reply.elements, parts.count == 3 else {
            return .failure(UnreadableRoomData(why: RedisRoomStore.describe(reply)))
        }
        guard let revision = StoredRevision.parse(field: parts[0]) else {
            return .failure(UnreadableRoomData(why: "its revision \(RedisRoomStore.describe(parts[0])) is not one this daemon can take"))
        }
        return .success(StoredRoomHash(revision: revision, route: parts[1].text ?? "", tag: parts[2].text ?? ""))
    }
}

/// Why what Redis holds for a room cannot be taken (logged, and the room set aside).
struct UnreadableRoomData: Error, Equatable {
    var why: String
}
