import RedisClient

/// A room's history stream as the store reads it to fill a gap: the events
/// from one revision on, each an entry whose id is `<rev>-0` and whose
/// fields are the change's op, route and tag.
enum RoomHistory {
    /// The command that reads the stream from `revision` on.
    static func command(_ keys: BackplaneKeys, room: String, from revision: UInt64) -> [String] {
        ["XRANGE", keys.history(room), "\(revision)-0", "+"]
    }

    /// The events in `entries`, oldest first. One entry this daemon cannot
    /// take fails the whole read: skipping it would leave the very gap the
    /// read was meant to fill.
    static func read(_ entries: [RedisReply], room: String) -> Result<[PublishedChange], UnreadableRoomData> {
        var changes: [PublishedChange] = []
        changes.reserveCapacity(entries.count)
        for entry in entries {
            guard let parts = entry.elements, parts.count == 2, let id = parts[0].text,
                  let revision = StoredRevision.parse(id.prefix { $0 != "-" }), let fields = parts[1].elements else {
                return .failure(UnreadableRoomData(
                    why: "its history holds an entry this daemon cannot take: \(RedisRoomStore.describe(entry))"))
            }
            var op = "", route = "", tag = ""
            for i in stride(from: 0, to: fields.count - 1, by: 2) {
                switch fields[i].text {
                case "op": op = fields[i + 1].text ?? ""
                case "route": route = fields[i + 1].text ?? ""
                case "tag": tag = fields[i + 1].text ?? ""
                default: break
                }
            }
            changes.append(PublishedChange(room: room, revision: revision, tag: tag, op: op, route: route))
        }
        return .success(changes)
    }
}
