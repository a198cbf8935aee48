// The command parser on arbitrary lines. Properties:
//   - it never crashes, and only blank lines get no result;
//   - a refusal carries one of the codes the parse step may give;
//   - every reply line built from its result is exactly one line;
//   - flipping the ASCII case of the verb changes nothing;
//   - a parsed change (SELECT PUSH POP ROOT NEXT OPEN PRESENT DISMISS), written
//     back out as a line, parses to the same command, and obeys the catalog
//     and the depth limit (stack and sheets together);
//   - WATCH <rev> takes exactly the decimal numbers that fit in 64 bits;
//   - before AUTH, a line is bad-encoding, auth-required, or (for AUTH PING
//     HELLO QUIT WHOAMI only) answered exactly as after AUTH: nothing else leaks;
//   - (1.2) with a view grant, a line is forbidden exactly when its verb
//     changes a room (or is IF), and otherwise answered as with control.
import NavSyncCore

/// The codes that can be judged from the line and the catalog alone.
private let parseCodes: Set<ErrorCode> = [.unknownCommand, .badArgs, .unknownScreen, .badRoute, .limit, .badEncoding]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParser(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    let settings = input.byte()
    let catalog = settings & 1 == 0 ? Catalog.builtIn : abcCatalog
    let maxDepth = settings & 2 == 0 ? 64 : 1 + Int(settings >> 2) % 6
    // The framer never hands the parser a \n, so neither does this target.
    let line = input.rest().split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)
        .first.map(Array.init) ?? []
    let parser = CommandParser(catalog: catalog, maxDepth: maxDepth)

    guard let result = parser.parse(line) else {
        require(line.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") },
                "only blank lines are ignored", line.shown)
        return 0
    }
    // Messages may quote the verb as typed, so refusals compare by code.
    let flipped = parser.parse(flippingVerbCase(line))
    switch (result, flipped) {
    case (.success(let a), .success(let b)) where a == b: break
    case (.failure(let a), .failure(let b)) where a.code == b.code: break
    default: violated("verbs are case-insensitive", "\(line.shown): \(result) vs \(String(describing: flipped))")
    }

    let verb = firstVerb(line)
    switch parser.parse(line, authenticated: false) {
    case nil:
        violated("a line with a result has one before AUTH too", line.shown)
    case .failure(let error)? where error.code == .badEncoding:
        require(result == .failure(error), "bad-encoding comes before auth-required", line.shown)
    case let early? where verb?.row.allowedBeforeAuth == true:
        require(early == result, "AUTH PING HELLO QUIT WHOAMI are answered before AUTH as after", "\(line.shown): \(early)")
    case let early?:
        require(early == .failure(CommandParser.authRequired), "every other line is auth-required before AUTH",
                "\(line.shown): \(early)")
    }

    let viewer = parser.parse(line, grant: Grant(role: .view, rooms: .every, name: "view"), room: "main")
    switch viewer {
    case .failure(let error)? where error.code == .badEncoding:
        require(result == .failure(error), "bad-encoding comes before forbidden", line.shown)
    case .failure(let error)? where error.code == .forbidden:
        require(verb?.row.access.role == .control, "only changes are forbidden to a viewer", line.shown)
    default:
        require(verb?.row.access.role != .control, "a viewer's change is forbidden", line.shown)
        require(viewer == result, "a viewer's other lines are answered as a controller's", line.shown)
    }

    switch result {
    case .failure(let error):
        require(parseCodes.contains(error.code), "parse errors use parse-step codes", "\(error.code) for \(line.shown)")
        requireOneLine(Wire.error(error), line)
    case .success(let command):
        check(command, parser: parser, catalog: catalog, maxDepth: maxDepth, line: line)
    }
    return 0
}

private func check(_ command: Command, parser: CommandParser, catalog: Catalog, maxDepth: Int, line: [UInt8]) {
    switch command {
    case .mutate(let mutation, let revision):
        check(mutation, catalog: catalog, maxDepth: maxDepth, line: line)
        let prefix = revision.map { "IF \($0) " } ?? ""
        let rewritten = prefix + text(of: mutation)
        let again = parser.parse(Array(rewritten.utf8))
        require(again == .success(command), "a parsed change written back parses the same",
                "\(line.shown) -> \(String(reflecting: rewritten)) -> \(String(describing: again))")
        let state = RoomState(mutationNavigation(mutation) ?? Navigation(stack: catalog.initialStack),
                              revision: revision ?? 7)
        requireOneLine(Wire.state(state), line)
        requireOneLine(Wire.event(state, op: mutation.op), line)
    case .ping(let text):
        requireOneLine(Wire.pong(text), line)
    case .join(let room):
        require(Names.isValid(room), "JOIN takes only valid room names", line.shown)
    case .auth(let token):
        require(!token.isEmpty, "AUTH has a token", line.shown)
    case .hello(let version):
        require(version == nil || version == "1", "HELLO accepts only version 1", line.shown)
    case .watch(let after):
        if let after {
            let again = parser.parse(Array("WATCH \(after)".utf8))
            require(again == .success(command), "a parsed WATCH <rev> written back parses the same", line.shown)
        }
    case .name(let name):
        require(Names.isValidMemberName(name), "NAME takes only valid member names", line.shown)
        requireOneLine(Wire.member(Member(id: "1", name: name, role: .view)), line)
    case .at(let navigation?):
        require(navigation.depth <= maxDepth, "AT's route is within --max-depth", line.shown)
        for entry in navigation.stack + navigation.sheets {
            require(catalog[entry.screen] != nil, "AT's screens are in the catalog", line.shown)
        }
        let route = Route.encode(navigation)
        let again = parser.parse(Array("AT \(route)".utf8))
        require(again == .success(command), "a parsed AT written back parses the same", "\(line.shown) -> \(route)")
        requireOneLine(Wire.member(Member(id: "1", name: "x", role: .view, at: route)), line)
    case .at(nil), .who, .presence, .whoami:
        break
    case .get, .unwatch, .screens, .messages, .rooms, .stats, .quit, .help:
        break
    }
}

private func check(_ mutation: Mutation, catalog: Catalog, maxDepth: Int, line: [UInt8]) {
    // Data typed after a screen name is trimmed; data decoded from an OPEN
    // route is taken as written (%20 may start or end it).
    func valid(_ entry: RouteEntry, typed: Bool) {
        guard let screen = catalog[entry.screen] else { violated("parsed screens are in the catalog", line.shown) }
        require(screen.dataProblem(entry.data) == nil, "parsed data obeys the screen's rule", line.shown)
        if let data = entry.data {
            require(!data.isEmpty, "empty data is stored as none", line.shown)
            guard typed else { return }
            let edges = [data.utf8.first!, data.utf8.last!]
            require(!edges.contains(UInt8(ascii: " ")) && !edges.contains(UInt8(ascii: "\t")),
                    "data is trimmed", line.shown)
        }
    }
    switch mutation {
    case .select(let entry), .push(let entry), .present(let entry):
        valid(entry, typed: true)
    case .open(let navigation):
        require(!navigation.stack.isEmpty && navigation.depth <= maxDepth,
                "an opened route has a stack and at most maxDepth entries with its sheets",
                "\(navigation.depth) entries, max \(maxDepth): \(line.shown)")
        (navigation.stack + navigation.sheets).forEach { valid($0, typed: false) }
    case .next(let data):
        require(data != "", "empty NEXT data is none", line.shown)
    case .pop, .root, .dismiss:
        break
    }
}

/// The line a client would type for this change.
private func text(of mutation: Mutation) -> String {
    func entryText(_ entry: RouteEntry) -> String { entry.data.map { "\(entry.screen) \($0)" } ?? entry.screen }
    switch mutation {
    case .select(let entry): return "SELECT " + entryText(entry)
    case .push(let entry): return "PUSH " + entryText(entry)
    case .pop: return "POP"
    case .root: return "ROOT"
    case .next(let data): return data.map { "NEXT \($0)" } ?? "NEXT"
    case .open(let navigation): return "OPEN " + Route.encode(navigation)
    case .present(let entry): return "PRESENT " + entryText(entry)
    case .dismiss: return "DISMISS"
    }
}

private func mutationNavigation(_ mutation: Mutation) -> Navigation? {
    switch mutation {
    case .select(let entry), .push(let entry): return [entry]
    case .present(let entry): return Navigation(stack: [entry], sheets: [entry])
    case .open(let navigation): return navigation
    default: return nil
    }
}

/// A reply quoting client input must not smuggle in a second line.
private func requireOneLine(_ bytes: [UInt8], _ line: [UInt8]) {
    require(bytes.last == UInt8(ascii: "\n") && bytes.filter { $0 == UInt8(ascii: "\n") }.count == 1,
            "a reply is exactly one line", "\(bytes.shown) for \(line.shown)")
}

/// The same line with the ASCII letters of its first token (and of IF's inner
/// verb) in the other case.
/// The verb of the line's first token, compared in ASCII upper case.
private func firstVerb(_ line: [UInt8]) -> Verb? {
    let token = line.drop { $0 == 32 || $0 == 9 }.prefix { $0 != 32 && $0 != 9 }
    return Verb(rawValue: String(decoding: token.map { (97...122).contains($0) ? $0 - 32 : $0 }, as: UTF8.self))
}

private func flippingVerbCase(_ line: [UInt8]) -> [UInt8] {
    var out = line
    var i = 0
    var tokensFlipped = 0
    var isIF = false
    while i < out.count && tokensFlipped < 3 {
        while i < out.count && (out[i] == 32 || out[i] == 9) { i += 1 }
        let start = i
        while i < out.count && out[i] != 32 && out[i] != 9 {
            // Only the verb (token 0) and IF's verb (token 2) are case-free.
            if tokensFlipped != 1 {
                let b = out[i]
                if (65...90).contains(b) { out[i] = b + 32 } else if (97...122).contains(b) { out[i] = b - 32 }
            }
            i += 1
        }
        if tokensFlipped == 0 {
            let verb = line[start..<i]
            isIF = verb.count == 2 && (verb.first! | 0x20) == UInt8(ascii: "i") && (verb.last! | 0x20) == UInt8(ascii: "f")
            if !isIF { break }
        }
        tokensFlipped += 1
    }
    return out
}
