import NavSyncCore

/// (1.2) Member changes as the fleet carries them: a daemon publishes one
/// message per loop turn on the presence channel, a line per change,
///
///     <epoch> M <room> <id> <name> <role> <at>
///     <epoch> G <room> <id>
///
/// and keeps each room's members in a hash whose values are
/// `<name> <role> <at>`. Every field is a single token by the protocol's
/// own rules (room, id, name, role, route), so a blank separates them safely.
enum PresenceMessage: Equatable {
    case member(room: String, Member)
    case gone(room: String, id: String)

    var room: String {
        switch self {
        case .member(let room, _), .gone(let room, _): return room
        }
    }

    var id: String {
        switch self {
        case .member(_, let member): return member.id
        case .gone(_, let id): return id
        }
    }

    func line(epoch: String) -> String {
        switch self {
        case .member(let room, let member): return "\(epoch) M \(room) \(member.id) \(Self.hashValue(member))"
        case .gone(let room, let id): return "\(epoch) G \(room) \(id)"
        }
    }

    /// The lines of one message, with the epoch each was published under; malformed lines are skipped.
    static func parse(_ payload: [UInt8]) -> [(epoch: String, change: PresenceMessage)] {
        String(decoding: payload, as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 4, Names.isValid(fields[2]), Member.isValidID(fields[3]) else { return nil }
            switch fields[1] {
            case "M" where fields.count == 7:
                guard let member = member(id: fields[3], fields: fields[4...].joined(separator: " ")) else { return nil }
                return (fields[0], .member(room: fields[2], member))
            case "G" where fields.count == 4:
                return (fields[0], .gone(room: fields[2], id: fields[3]))
            default:
                return nil
            }
        }
    }

    /// A member's hash value: `<name> <role> <at>`.
    static func hashValue(_ member: Member) -> String {
        "\(member.name) \(member.role.rawValue) \(member.atText)"
    }

    /// A member from its id and hash value; nil when the value is not one.
    static func member(id: String, fields: String) -> Member? {
        guard Member.isValidID(id) else { return nil }
        let parts = fields.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, Names.isValidMemberName(parts[0]), let role = Role(rawValue: String(parts[1])),
              role != .none, !parts[2].isEmpty else { return nil }
        return Member(id: id, name: String(parts[0]), role: role, at: parts[2] == "-" ? nil : String(parts[2]))
    }

    /// The daemon a member id belongs to: what comes before its first `.`.
    static func daemonTag(of id: String) -> Substring? {
        guard let dot = id.firstIndex(of: ".") else { return nil }
        return id[..<dot]
    }
}
