// The presence lines a daemon reads from Redis (PresenceMessage.parse and
// the members hash values), under fuzzed bounds. Properties:
//   - nothing crashes; a message over 1 MiB is one rejection;
//   - every line is taken or refused, never both nor neither (empty lines
//     aside), and a message gives what its lines give one at a time;
//   - a line taken holds only printable ASCII and is exactly the line the
//     change writes back (so nothing but the canonical form passes), with
//     every field within its rule and `<at>` within --max-line and
//     --max-depth;
//   - a member taken reads back the same from its members hash value;
//   - the changes taken, published again in messages of a fuzzed size,
//     read back the same, in order, each message within that size.
// Built from Sources/NavSyncBackplane/PresenceMessage.swift and
// PresenceBounds.swift with this file (Fuzz/run.sh, target `presence`).
import NavSyncCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPresence(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    let bounds = PresenceBounds(maxLineBytes: 16 + input.below(4096), maxDepth: 1 + Int(input.byte() % 64))
    let messageBytes = 40 + input.below(400)
    let payload = input.rest()

    let parsed = PresenceMessage.parse(payload, bounds: bounds)
    let lines = payload.split(separator: UInt8(ascii: "\n"))
    require(parsed.changes.count + parsed.rejected.count == lines.count, "every line is taken or refused",
            "\(parsed.changes.count) + \(parsed.rejected.count) of \(lines.count) in \(payload.shown)")

    var alone: [(epoch: String, change: PresenceMessage)] = []
    for line in lines {
        guard case .success(let taken) = PresenceMessage.parseLine(line, bounds: bounds) else { continue }
        alone.append(taken)
        let written = Array(taken.change.line(epoch: taken.epoch).utf8)
        require(written == Array(line), "a line taken is the line its change writes", line.shown)
        require(!line.contains { $0 < 0x20 || $0 >= 0x7F }, "a line taken is printable ASCII", line.shown)
        check(taken.change, bounds, line)
    }
    require(alone.map(\.change) == parsed.changes.map(\.change) && alone.map(\.epoch) == parsed.changes.map(\.epoch),
            "a message gives what its lines give one at a time", payload.shown)

    let changes = parsed.changes.map(\.change)
    let (messages, leftOut) = changes.messages(epoch: "e", maxBytes: messageBytes)
    require(messages.allSatisfy { $0.utf8.count <= messageBytes }, "each message within its size", payload.shown)
    let again = messages.flatMap { PresenceMessage.parse(Array($0.utf8), bounds: bounds).changes.map(\.change) }
    let kept = changes.filter { $0.line(epoch: "e").utf8.count <= messageBytes }
    require(again == kept && leftOut == changes.count - kept.count, "published again, read back the same", payload.shown)
    return 0
}

private func check(_ change: PresenceMessage, _ bounds: PresenceBounds, _ line: ArraySlice<UInt8>) {
    require(Names.isValid(change.room), "the room is a room name", line.shown)
    require(Member.isValidID(change.id) && (PresenceMessage.daemonTag(of: change.id).map { !$0.isEmpty } ?? false),
            "the id names its daemon", line.shown)
    guard case .member(_, let member) = change else { return }
    require(Names.isValidMemberName(member.name), "the name is a member name", line.shown)
    require(member.role != .none, "the role is control or view", line.shown)
    if let at = member.at {
        require(3 + at.utf8.count <= bounds.maxLineBytes, "an AT line with it fits --max-line", line.shown)
        guard case .success(let navigation) = Route.decode(at) else { violated("<at> decodes", line.shown) }
        require(navigation.depth <= bounds.maxDepth, "<at> fits --max-depth", line.shown)
        require(Route.encode(navigation) == at, "<at> is canonical", line.shown)
    }
    let value = Array(PresenceMessage.hashValue(member).utf8)
    guard case .success(let fromHash) = PresenceMessage.member(id: Array(member.id.utf8), value: value, bounds: bounds) else {
        violated("a member taken reads back from its hash value", line.shown)
    }
    require(fromHash == member, "the hash value gives the same member", line.shown)
}

private extension ArraySlice where Element == UInt8 {
    var shown: String { Array(self).shown }
}
