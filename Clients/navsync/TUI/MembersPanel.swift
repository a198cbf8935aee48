import NavSyncClient
import NavSyncCore

/// What a frame shows about presence: who is here, which of them is
/// this client, and, while detached, where the room itself is.
struct PresenceFrame {
    var members: [Member] = []
    var memberID: String?
    /// From the last `STATS` (fleet-wide), for when the list is not followed.
    var memberCount: Int?
    /// The room's state while this client shows its own; nil while following.
    var roomWhileDetached: RoomState?

    var isDetached: Bool { roomWhileDetached != nil }

    /// "How many are here": the members followed, else the figure.
    var count: Int? { members.isEmpty ? memberCount : members.count }

    /// `ada  control  following` or `bo  view  at /red/blue`, this client marked.
    func lines(nameWidth: Int) -> [String] {
        members.map { member in
            let me = member.id == memberID ? " (you)" : ""
            let place = member.at.map { "at " + SpokenRoute.words($0) } ?? "following"
            return (member.name + me).padded(to: nameWidth) + "  " + member.role.rawValue.padded(to: 7) + "  " + place
        }
    }
}

extension Painter {
    /// The members panel: one line per member, in arrival order, over the screen.
    func paintMembers(_ presence: PresenceFrame, rows: Int, columns: Int) {
        let dots = terminal.unicode ? "…" : "..."
        let style = terminal.attributes(Style.menu)
        let nameWidth = min(24, (presence.members.map { TextCells.width($0.name) + ($0.id == presence.memberID ? 6 : 0) }.max() ?? 4))
        var lines = presence.lines(nameWidth: nameWidth)
        if lines.isEmpty { lines = ["nobody listed yet (a 1.1 daemon lists no members)"] }
        let footer = presence.isDetached ? "f follow the room  any other key closes" : "d detach  any other key closes"
        let width = min(columns - 2, max(TextCells.width(footer), lines.map { TextCells.width($0) }.max() ?? 0) + 6)
        let visible = max(1, min(lines.count, rows - 6))
        let height = visible + 4
        let top = max(1, (rows - height) / 2)
        let left = max(0, (columns - width) / 2)
        for row in top..<(top + height) { terminal.fill(row: row, column: left, width: width, style) }
        terminal.frame(top: top, left: left, height: height, width: width, style)
        let heading = " Members (\(presence.members.count)) "
        terminal.put(heading, row: top, column: left + 2, style | terminal.attributes(bold: true))
        for (index, line) in lines.prefix(visible).enumerated() {
            let own = presence.members.indices.contains(index) && presence.members[index].id == presence.memberID
            terminal.put(TextCells.truncate(line, to: width - 4, ellipsis: dots), row: top + 1 + index, column: left + 2,
                         own ? style | terminal.attributes(bold: true) : style)
        }
        terminal.put(TextCells.truncate(footer, to: width - 4, ellipsis: dots), row: top + height - 2, column: left + 2,
                     style | terminal.attributes(dim: true))
    }
}
