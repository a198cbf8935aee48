/// Turns one framed line into a `Command`, or the error the client should get.
/// It judges everything that can be judged from the line and the catalog
/// alone; what depends on a room's state is the reducer's job.
public struct CommandParser: Sendable {
    public var catalog: Catalog
    public var maxDepth: Int

    public init(catalog: Catalog, maxDepth: Int) {
        self.catalog = catalog
        self.maxDepth = maxDepth
    }

    /// nil for a blank line, which the protocol ignores without a reply.
    /// The line excludes its terminator (the framer strips `\n` and a `\r` before it).
    public func parse(_ line: some Collection<UInt8>) -> Result<Command, ProtocolError>? {
        guard let text = String(validating: line, as: UTF8.self) else {
            return .failure(ProtocolError(.badEncoding, "line is not valid UTF-8"))
        }
        let (verb, rest) = Self.splitToken(Substring(text))
        guard !verb.isEmpty else { return nil }
        return Result { () throws(ProtocolError) in try command(verb: verb, rest: rest) }
    }

    private func command(verb: Substring, rest: Substring) throws(ProtocolError) -> Command {
        switch Self.verbKey(verb) {
        case "GET": try Self.noArguments("GET", rest); return .get
        case "WATCH": try Self.noArguments("WATCH", rest); return .watch
        case "UNWATCH": try Self.noArguments("UNWATCH", rest); return .unwatch
        case "SCREENS": try Self.noArguments("SCREENS", rest); return .screens
        case "STATS": try Self.noArguments("STATS", rest); return .stats
        case "QUIT": try Self.noArguments("QUIT", rest); return .quit
        case "HELP": try Self.noArguments("HELP", rest); return .help
        case "PING": return .ping(text: String(Self.trimBlanks(rest)))
        case "JOIN":
            let (room, extra) = Self.splitToken(rest)
            guard !room.isEmpty, extra.isEmpty else { throw ProtocolError(.badArgs, "usage: JOIN <room>") }
            guard Names.isValid(room) else {
                throw ProtocolError(.badArgs, "room names are 1-64 characters of A-Z a-z 0-9 _ . -")
            }
            return .join(room: String(room))
        case "HELLO":
            let (version, extra) = Self.splitToken(rest)
            guard extra.isEmpty else { throw ProtocolError(.badArgs, "usage: HELLO [version]") }
            if !version.isEmpty && version != "1" {
                throw ProtocolError(.badArgs, "protocol version \(version) is not supported; this server speaks 1")
            }
            return .hello(version: version.isEmpty ? nil : String(version))
        case "AUTH":
            let token = Self.trimBlanks(rest)
            guard !token.isEmpty else { throw ProtocolError(.badArgs, "usage: AUTH <token>") }
            return .auth(token: String(token))
        case "IF":
            let (revText, mutationText) = Self.splitToken(rest)
            guard revText.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let revision = UInt64(revText) else {
                throw ProtocolError(.badArgs, "usage: IF <rev> <mutation>, rev a whole number")
            }
            let (innerVerb, innerRest) = Self.splitToken(mutationText)
            guard !innerVerb.isEmpty else { throw ProtocolError(.badArgs, "usage: IF <rev> <mutation>") }
            guard let mutation = try mutation(verb: innerVerb, rest: innerRest) else {
                if Self.knownVerbs.contains(Self.verbKey(innerVerb)) {
                    throw ProtocolError(.badArgs, "IF guards only SELECT PUSH POP ROOT NEXT OPEN")
                }
                throw ProtocolError(.unknownCommand, "unknown command '\(innerVerb)'; try HELP")
            }
            return .mutate(mutation, ifRevision: revision)
        default:
            guard let mutation = try mutation(verb: verb, rest: rest) else {
                throw ProtocolError(.unknownCommand, "unknown command '\(verb)'; try HELP")
            }
            return .mutate(mutation, ifRevision: nil)
        }
    }

    /// nil when the verb is not a mutation.
    private func mutation(verb: Substring, rest: Substring) throws(ProtocolError) -> Mutation? {
        switch Self.verbKey(verb) {
        case "SELECT": return .select(try entry(verb: "SELECT", rest))
        case "PUSH": return .push(try entry(verb: "PUSH", rest))
        case "POP": try Self.noArguments("POP", rest); return .pop
        case "ROOT": try Self.noArguments("ROOT", rest); return .root
        case "NEXT":
            let data = Self.trimBlanks(rest)
            return .next(data: data.isEmpty ? nil : String(data))
        case "OPEN": return .open(try route(rest))
        default: return nil
        }
    }

    private func entry(verb: String, _ rest: Substring) throws(ProtocolError) -> RouteEntry {
        let (name, dataText) = Self.splitToken(rest)
        guard !name.isEmpty else { throw ProtocolError(.badArgs, "usage: \(verb) <screen> [data...]") }
        guard let screen = catalog[String(name)] else {
            throw ProtocolError(.unknownScreen, "no screen named '\(name)'; see SCREENS")
        }
        let entry = RouteEntry(screen: screen.name, data: String(Self.trimBlanks(dataText)))
        if let problem = screen.dataProblem(entry.data) { throw ProtocolError(.badArgs, problem) }
        return entry
    }

    private func route(_ rest: Substring) throws(ProtocolError) -> [RouteEntry] {
        let (text, extra) = Self.splitToken(rest)
        guard !text.isEmpty, extra.isEmpty else { throw ProtocolError(.badArgs, "usage: OPEN <route>, e.g. OPEN /red/blue:hi") }
        let stack: [RouteEntry]
        switch Route.decode(text) {
        case .success(let decoded): stack = decoded
        case .failure(let error): throw ProtocolError(.badRoute, error.description)
        }
        for entry in stack {
            guard let screen = catalog[entry.screen] else {
                throw ProtocolError(.unknownScreen, "no screen named '\(entry.screen)'; see SCREENS")
            }
            if let problem = screen.dataProblem(entry.data) { throw ProtocolError(.badArgs, problem) }
        }
        guard stack.count <= maxDepth else {
            throw ProtocolError(.limit, "route has \(stack.count) entries; the maximum depth is \(maxDepth)")
        }
        return stack
    }

    static let knownVerbs: Set<String> = [
        "GET", "SELECT", "PUSH", "POP", "ROOT", "NEXT", "OPEN", "IF", "WATCH", "UNWATCH",
        "JOIN", "SCREENS", "STATS", "PING", "HELLO", "AUTH", "QUIT", "HELP",
    ]

    /// Verbs compare case-insensitively in ASCII only. Unicode case mapping
    /// would let `\u{17F}elect` (long s) pass for SELECT and `\u{131}f` (dotless i)
    /// for IF, though neither verb is in the table.
    static func verbKey(_ verb: Substring) -> String {
        String(decoding: verb.utf8.map { b in
            b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z") ? b - 32 : b
        }, as: UTF8.self)
    }

    private static func noArguments(_ verb: String, _ rest: Substring) throws(ProtocolError) {
        guard rest.isEmpty else { throw ProtocolError(.badArgs, "\(verb) takes no arguments") }
    }

    // Blanks are matched byte-wise on the UTF-8 view: a combining mark after a
    // space must not glue the two into one Character and hide the separator.
    @inline(__always)
    static func isBlank(_ b: UInt8) -> Bool { b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") }

    static func trimBlanks(_ s: Substring) -> Substring {
        let u = s.utf8
        guard let first = u.firstIndex(where: { !isBlank($0) }) else { return s[s.endIndex...] }
        let last = u.lastIndex(where: { !isBlank($0) })!
        return s[first...last]
    }

    /// The first blank-separated token, and the rest with its leading and
    /// trailing blanks removed.
    static func splitToken(_ s: Substring) -> (token: Substring, rest: Substring) {
        let u = s.utf8
        let start = u.firstIndex(where: { !isBlank($0) }) ?? u.endIndex
        let end = u[start...].firstIndex(where: isBlank) ?? u.endIndex
        return (s[start..<end], trimBlanks(s[end...]))
    }
}
