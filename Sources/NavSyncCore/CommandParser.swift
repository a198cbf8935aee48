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

    /// The answer to every line whose verb may not come before `AUTH`, on a
    /// connection that has not authenticated.
    public static let authRequired = Grant.authRequired

    /// nil for a blank line, which the protocol ignores without a reply.
    /// The line excludes its terminator (the framer strips `\n` and a `\r` before it).
    ///
    /// With `authenticated` false (a daemon with a token, before a good
    /// `AUTH`), a line whose verb is not allowed before `AUTH` in the verb
    /// table is `auth-required` before anything else about it is looked at,
    /// known verb or not, good arguments or not: a parse error would tell a
    /// peer without the token what the catalog holds. Only `bad-encoding`
    /// comes first (the line-too-long check is the framer's, earlier still).
    public func parse(_ line: some Collection<UInt8>, authenticated: Bool = true) -> Result<Command, ProtocolError>? {
        parse(line, grant: authenticated ? .unrestricted : .unauthenticated, room: Names.defaultRoom)
    }

    /// The same, for a connection holding `grant` in `room`: after the
    /// encoding, the grant judges the verb (and `JOIN`'s room as written)
    /// before anything else about the line is looked at, so a viewer learns
    /// nothing from the parse errors of a mutation it may not send
    /// (`Grant.refusal`).
    public func parse(_ line: some Collection<UInt8>, grant: Grant, room: String) -> Result<Command, ProtocolError>? {
        guard let text = String(validating: line, as: UTF8.self) else {
            return .failure(ProtocolError(.badEncoding, "line is not valid UTF-8"))
        }
        let (verb, rest) = Self.splitToken(Substring(text))
        guard !verb.isEmpty else { return nil }
        if let refusal = grant.refusal(verb: Verb(token: verb), rest: rest, room: room) {
            return .failure(refusal)
        }
        return Result { () throws(ProtocolError) in try command(verb: verb, rest: rest) }
    }

    private func command(verb token: Substring, rest: Substring) throws(ProtocolError) -> Command {
        guard let verb = Verb(token: token) else {
            throw ProtocolError(.unknownCommand, "unknown command '\(token)'; try HELP")
        }
        if verb.row.isMutation { return .mutate(try mutation(verb, rest: rest), ifRevision: nil) }
        if verb.row.arguments == .none { try Self.noArguments(verb, rest) }
        switch verb {
        case .get: return .get
        case .watch:
            let (revText, extra) = Self.splitToken(rest)
            guard extra.isEmpty else { throw Self.usage(verb) }
            guard !revText.isEmpty else { return .watch(after: nil) }
            return .watch(after: try Self.revision(revText, verb))
        case .unwatch: return .unwatch
        case .screens: return .screens
        case .messages: return .messages
        case .stats: return .stats
        case .rooms: return .rooms
        case .quit: return .quit
        case .help: return .help
        case .whoami: return .whoami
        case .who: return .who
        case .name:
            guard !rest.isEmpty else { throw Self.usage(verb) }
            guard Names.isValidMemberName(rest) else { throw ProtocolError(.badArgs, Names.memberNameRule) }
            return .name(String(rest))
        case .at:
            // `AT -` follows again; any other argument is checked as OPEN checks its route.
            return rest == "-" ? .at(nil) : .at(try route(rest, verb: verb))
        case .presence:
            let (word, extra) = Self.splitToken(rest)
            guard extra.isEmpty else { throw Self.usage(verb) }
            if word.isEmpty { return .presence(on: true) }
            guard word.uppercased() == "OFF" else { throw Self.usage(verb) }
            return .presence(on: false)
        case .ping: return .ping(text: String(Self.trimBlanks(rest)))
        case .join:
            guard !rest.isEmpty else { throw Self.usage(verb) }
            // The whole rest is the name: `JOIN bad room` is told the naming
            // rule (no blanks), not a usage line that hides why.
            guard Names.isValid(rest) else {
                throw ProtocolError(.badArgs, "room names are 1-64 characters of A-Z a-z 0-9 _ . -")
            }
            return .join(room: String(rest))
        case .hello:
            let (version, extra) = Self.splitToken(rest)
            guard extra.isEmpty else { throw Self.usage(verb) }
            let spoken = String(NavSyncVersion.protocolVersion)
            if !version.isEmpty && version != spoken {
                throw ProtocolError(.badArgs, "protocol version \(version) is not supported; this server speaks \(spoken)")
            }
            return .hello(version: version.isEmpty ? nil : String(version))
        case .auth:
            let token = Self.trimBlanks(rest)
            guard !token.isEmpty else { throw Self.usage(verb) }
            return .auth(token: String(token))
        case .guarded:
            let (revText, mutationText) = Self.splitToken(rest)
            let revision = try Self.revision(revText, verb)
            let (innerToken, innerRest) = Self.splitToken(mutationText)
            guard !innerToken.isEmpty else { throw Self.usage(verb) }
            guard let inner = Verb(token: innerToken) else {
                throw ProtocolError(.unknownCommand, "unknown command '\(innerToken)'; try HELP")
            }
            guard inner.row.isMutation else {
                throw ProtocolError(.badArgs, "IF guards only \(Verb.mutations.map(\.rawValue).joined(separator: " "))")
            }
            return .mutate(try mutation(inner, rest: innerRest), ifRevision: revision)
        case .select, .push, .pop, .root, .next, .open, .present, .dismiss:
            preconditionFailure("mutations are parsed above")
        }
    }

    private func mutation(_ verb: Verb, rest: Substring) throws(ProtocolError) -> Mutation {
        if verb.row.arguments == .none { try Self.noArguments(verb, rest) }
        switch verb {
        case .select: return .select(try entry(verb, rest))
        case .push: return .push(try entry(verb, rest))
        case .pop: return .pop
        case .root: return .root
        case .next:
            let data = Self.trimBlanks(rest)
            return .next(data: data.isEmpty ? nil : String(data))
        case .open: return .open(try route(rest))
        case .present: return .present(try entry(verb, rest))
        case .dismiss: return .dismiss
        case .get, .guarded, .watch, .unwatch, .join, .screens, .messages, .stats, .rooms, .ping, .hello, .auth, .quit, .help, .whoami,
             .name, .at, .who, .presence:
            preconditionFailure("\(verb) is not a mutation")
        }
    }

    private func entry(_ verb: Verb, _ rest: Substring) throws(ProtocolError) -> RouteEntry {
        let (name, dataText) = Self.splitToken(rest)
        guard !name.isEmpty else { throw Self.usage(verb) }
        guard let screen = catalog[String(name)] else {
            throw ProtocolError(.unknownScreen, "no screen named '\(name)'; see SCREENS")
        }
        let entry = RouteEntry(screen: screen.name, data: String(Self.trimBlanks(dataText)))
        if let problem = screen.dataProblem(entry.data) { throw ProtocolError(.badArgs, problem) }
        return entry
    }

    private func route(_ rest: Substring, verb: Verb = .open) throws(ProtocolError) -> Navigation {
        let (text, extra) = Self.splitToken(rest)
        guard !text.isEmpty, extra.isEmpty else {
            throw ProtocolError(.badArgs, "usage: \(verb.row.usage), e.g. \(verb.rawValue) /red/blue:hi")
        }
        let navigation: Navigation
        switch Route.decode(text) {
        case .success(let decoded): navigation = decoded
        case .failure(let error): throw ProtocolError(.badRoute, error.description)
        }
        for entry in navigation.stack + navigation.sheets {
            guard let screen = catalog[entry.screen] else {
                throw ProtocolError(.unknownScreen, "no screen named '\(entry.screen)'; see SCREENS")
            }
            if let problem = screen.dataProblem(entry.data) { throw ProtocolError(.badArgs, problem) }
        }
        guard navigation.depth <= maxDepth else {
            throw ProtocolError(.limit, "route has \(navigation.depth) entries; the maximum depth is \(maxDepth)")
        }
        return navigation
    }

    /// Decimal digits that fit in 64 bits; no sign, no blanks inside.
    private static func revision(_ text: Substring, _ verb: Verb) throws(ProtocolError) -> UInt64 {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let revision = UInt64(text) else {
            throw ProtocolError(.badArgs, "usage: \(verb.row.usage), rev a whole number below 2^64")
        }
        return revision
    }

    private static func usage(_ verb: Verb) -> ProtocolError {
        ProtocolError(.badArgs, "usage: \(verb.row.usage)")
    }

    private static func noArguments(_ verb: Verb, _ rest: Substring) throws(ProtocolError) {
        guard rest.isEmpty else { throw ProtocolError(.badArgs, "\(verb.rawValue) takes no arguments") }
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
