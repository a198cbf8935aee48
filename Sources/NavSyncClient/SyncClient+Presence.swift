import NavSyncCore

/// (1.2) Presence in the client's state machine: the greeting names the
/// connection, asks who it is and follows the room's members; `MEMBER`,
/// `GONE` and unasked listings keep `members` current.
extension SyncClient {
    /// The greeting's presence lines, before `WATCH`: `NAME` with the name
    /// asked for, or with the fallback when the daemon surely says `anon`
    /// (no token); `WHOAMI` when the fallback depends on a grant's name or
    /// the caller follows presence (to know which member is itself).
    func presenceGreeting() -> [(String, Purpose, ClientRequest.Expectation)] {
        var lines: [(String, Purpose, ClientRequest.Expectation)] = []
        let name = options.name ?? (options.token == nil ? options.fallbackName : nil)
        if let name { lines.append((Verb.name.line(name), .name, .ok)) }
        let fallbackWaits = options.name == nil && options.token != nil && options.fallbackName != nil
        if options.askIdentity || options.presence || fallbackWaits {
            lines.append((Verb.whoami.line(), .whoami, .identity))
        }
        return lines
    }

    /// `WHOAMI` answered: remember the id; a grant that names nobody gets the fallback name.
    mutating func identified(_ identity: Identity, now: UInt64) -> [ClientAction] {
        memberID = identity.id
        var actions: [ClientAction] = []
        if identity.name == Grant.anonymousName, options.name == nil, let fallback = options.fallbackName, options.token != nil {
            pending.append(Pending(purpose: .lateName, expectation: .ok, sentAt: now))
            actions.append(.send(Verb.name.line(fallback) + "\n"))
        }
        return actions
    }

    /// The first answer to `PRESENCE`: the members as they are now.
    mutating func presenceAnswered(_ lines: [String]) -> [ClientAction] {
        followsPresence = true
        members = lines.compactMap { line in
            if case .member(let member) = ServerLine.parse(line) { return member }
            return nil
        }
        return [.note(.members(members))]
    }

    /// A presence line that answers no command, handled here; nil for any other line.
    mutating func presenceLine(_ line: ServerLine) -> [ClientAction]? {
        if var listing = presenceListing {
            switch line {
            case .member(let member):
                listing.append(member)
                presenceListing = listing
                return []
            case .end:
                presenceListing = nil
                members = listing
                return [.note(.members(members))]
            default:
                return nil
            }
        }
        switch line {
        case .presenceListing where followsPresence:
            presenceListing = []
            return []
        case .member(let member) where followsPresence && !awaitsMemberListing:
            if let index = members.firstIndex(where: { $0.id == member.id }) {
                members[index] = member
            } else {
                members.append(member)
            }
            return [.note(.members(members))]
        case .gone(let id) where followsPresence && !awaitsMemberListing:
            members.removeAll { $0.id == id }
            return [.note(.members(members))]
        default:
            return nil
        }
    }

    /// The oldest command is a `WHO` or `PRESENCE` whose `MEMBER` lines are its answer.
    private var awaitsMemberListing: Bool {
        guard let head = pending.first, head.expectation == .listing else { return false }
        if head.purpose == .presence { return true }
        return false
    }
}
