import NavSyncCore

/// Member changes as the fleet carries them: a daemon publishes the
/// changes of a loop turn on the presence channel, a line per change,
///
///     <epoch> M <room> <id> <name> <role> <at>
///     <epoch> G <room> <id>
///
/// and keeps each room's members in a hash whose values are
/// `<name> <role> <at>`. Every field is a single token by the protocol's
/// own rules (room, id, name, role, route), so a blank separates them safely.
///
/// Whoever can write to Redis can write these, so what is read back
/// is checked as strictly as a local member's `NAME` and `AT`
/// (`PresenceBounds`): a line that fails is reported as rejected, never
/// passed on, and a message is split on the sending side so it never needs
/// to be large.
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

    /// What one message held: the lines that passed, with the epoch each
    /// was published under, and one problem per line that did not.
    struct Parsed {
        var changes: [(epoch: String, change: PresenceMessage)] = []
        var rejected: [Problem] = []
    }

    /// The lines of one message, checked against `bounds`. A message over
    /// `PresenceBounds.maxMessageBytes` is not looked into at all: it is one
    /// rejection. Empty lines are skipped.
    static func parse(_ payload: [UInt8], bounds: PresenceBounds) -> Parsed {
        var parsed = Parsed()
        guard payload.count <= PresenceBounds.maxMessageBytes else {
            parsed.rejected.append(.messageTooLarge(bytes: payload.count))
            return parsed
        }
        for line in payload.split(separator: UInt8(ascii: "\n")) {
            switch parseLine(line, bounds: bounds) {
            case .success(let change): parsed.changes.append(change)
            case .failure(let problem): parsed.rejected.append(problem)
            }
        }
        return parsed
    }

    /// One line of a message.
    static func parseLine(_ line: ArraySlice<UInt8>, bounds: PresenceBounds)
        -> Result<(epoch: String, change: PresenceMessage), Problem> {
        // Nothing but printable ASCII may be in a line (every field's own rule
        // is narrower still): a control byte is named before any field is read.
        if let bad = line.first(where: { $0 < 0x20 || $0 >= 0x7F }) { return .failure(.unprintable(byte: bad)) }
        let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard fields.count >= 4 else { return .failure(.malformed) }
        guard !fields[0].isEmpty, fields[0].utf8.count <= Names.maxLength else { return .failure(.malformed) }
        guard Names.isValid(fields[2]) else { return .failure(.badRoom) }
        switch fields[1] {
        case "M" where fields.count == 7:
            return member(id: fields[3], name: fields[4], role: fields[5], at: fields[6], bounds: bounds)
                .map { (fields[0], .member(room: fields[2], $0)) }
        case "G" where fields.count == 4:
            if let problem = idProblem(fields[3]) { return .failure(problem) }
            return .success((fields[0], .gone(room: fields[2], id: fields[3])))
        default:
            return .failure(.malformed)
        }
    }

    /// A member's hash value: `<name> <role> <at>`.
    static func hashValue(_ member: Member) -> String {
        "\(member.name) \(member.role.rawValue) \(member.atText)"
    }

    /// A member from its id and hash value, checked like a channel line's.
    static func member(id: [UInt8], value: [UInt8], bounds: PresenceBounds) -> Result<Member, Problem> {
        if let bad = (id + value).first(where: { $0 < 0x20 || $0 >= 0x7F }) { return .failure(.unprintable(byte: bad)) }
        let parts = value.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard parts.count == 3 else { return .failure(.malformed) }
        return member(id: String(decoding: id, as: UTF8.self), name: parts[0], role: parts[1], at: parts[2], bounds: bounds)
    }

    private static func member(id: String, name: String, role: String, at: String,
                               bounds: PresenceBounds) -> Result<Member, Problem> {
        if let problem = idProblem(id) { return .failure(problem) }
        guard Names.isValidMemberName(name) else { return .failure(.badName) }
        guard let role = Role(rawValue: role), role != .none else { return .failure(.badRole) }
        if at == "-" { return .success(Member(id: id, name: name, role: role, at: nil)) }
        if let problem = bounds.routeProblem(at) { return .failure(problem) }
        return .success(Member(id: id, name: name, role: role, at: at))
    }

    /// An id must name its daemon (the part before its first `.`): that is
    /// how a member's end is found when its daemon dies, so one without a
    /// daemon would never leave.
    private static func idProblem(_ id: String) -> Problem? {
        guard Member.isValidID(id) else { return .badID }
        guard let tag = daemonTag(of: id), !tag.isEmpty else { return .badID }
        return nil
    }

    /// The daemon a member id belongs to: what comes before its first `.`.
    static func daemonTag(of id: String) -> Substring? {
        guard let dot = id.firstIndex(of: ".") else { return nil }
        return id[..<dot]
    }

    /// Why a line (or a whole message) read from Redis was not taken. The
    /// descriptions never quote what was read: it may hold anything.
    enum Problem: Error, Equatable, CustomStringConvertible {
        case messageTooLarge(bytes: Int)
        case unprintable(byte: UInt8)
        case malformed
        case badRoom
        case badID
        case badName
        case badRole
        case badRoute(RouteError)
        /// The route decodes, but is not written the way a daemon writes one
        /// (`Route.encode`): raw bytes where an escape belongs.
        case routeNotCanonical
        case routeTooLong(bytes: Int)
        case routeTooDeep(depth: Int)
        /// A new member of another daemon while this one holds as many as it may.
        case tooManyMembers(limit: Int)

        var description: String {
            switch self {
            case .messageTooLarge(let bytes): return "a message of \(bytes) bytes (over \(PresenceBounds.maxMessageBytes))"
            case .unprintable(let byte): return "a line holding the byte 0x\(String(byte, radix: 16))"
            case .malformed: return "a line that is not '<epoch> M <room> <id> <name> <role> <at>' nor '<epoch> G <room> <id>'"
            case .badRoom: return "a bad room name"
            case .badID: return "a bad member id"
            case .badName: return "a bad member name"
            case .badRole: return "a role other than control or view"
            case .badRoute(.badName): return "a route that does not parse (a malformed screen name)"
            case .badRoute(let error): return "a route that does not parse (\(error))"
            case .routeNotCanonical: return "a route not written as a daemon writes it"
            case .routeTooLong(let bytes): return "a route of \(bytes) bytes (an AT line over --max-line)"
            case .routeTooDeep(let depth): return "a route of \(depth) entries (over --max-depth)"
            case .tooManyMembers(let limit): return "a new member past the \(limit) other daemons' members kept"
            }
        }
    }
}

extension Array where Element == PresenceMessage {
    /// The turn's changes as messages of at most `maxBytes` each (lines
    /// joined by `\n`), in order. A line longer than that on its own (only
    /// possible with a `--max-line` near it) is left out: it would be
    /// refused by every daemon with the default bounds, and the members
    /// hash still holds the member.
    func messages(epoch: String, maxBytes: Int = PresenceBounds.maxPublishedBytes) -> (messages: [String], leftOut: Int) {
        var messages: [String] = []
        var current = ""
        var currentBytes = 0
        var leftOut = 0
        for change in self {
            let line = change.line(epoch: epoch)
            let size = line.utf8.count
            guard size <= maxBytes else {
                leftOut += 1
                continue
            }
            if currentBytes > 0 && currentBytes + 1 + size > maxBytes {
                messages.append(current)
                current = ""
                currentBytes = 0
            }
            current += currentBytes == 0 ? line : "\n" + line
            currentBytes += currentBytes == 0 ? size : size + 1
        }
        if !current.isEmpty { messages.append(current) }
        return (messages, leftOut)
    }
}
