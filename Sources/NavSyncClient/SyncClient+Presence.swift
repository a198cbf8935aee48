import NavSyncCore

/// Presence in the client's state machine: the greeting names the
/// connection, asks who it is and follows the room's members; `MEMBER`,
/// `GONE` and unasked listings keep `members` current.
extension SyncClient {
    /// The greeting's `NAME`, after `JOIN`: the name asked for, or the
    /// fallback when the daemon surely says `anon` (no token). `WHOAMI`
    /// (see `asksWhoami`) goes earlier, right after `AUTH`, so a refused
    /// `JOIN` can be explained with the rooms the grant allows.
    func presenceGreeting() -> [(String, Purpose, ClientRequest.Expectation)] {
        let name = options.name ?? (options.token == nil ? options.fallbackName : nil)
        guard let name else { return [] }
        return [(Verb.name.line(name), .name, .ok)]
    }

    /// The greeting asks `WHOAMI`: when the fallback name depends on a
    /// grant's name, the caller follows presence (to know which member is
    /// itself) or asked to know its grant.
    var asksWhoami: Bool {
        let fallbackWaits = options.name == nil && options.token != nil && options.fallbackName != nil
        return options.askIdentity || options.presence || fallbackWaits
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
