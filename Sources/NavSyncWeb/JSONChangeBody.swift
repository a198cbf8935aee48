import NavSyncCore

/// A `POST /rooms/NAME` body turned into the line-protocol request that
/// makes the same change: `{"op":"push","screen":"blue","data":"hi"}` is
/// `PUSH blue hi`. The ops, and which members each takes, come from the
/// line protocol's verb table (`Verb.mutations` and each row's
/// `arguments`), so there is no second list of changes to keep in step.
///
/// Only the body's shape is judged here: what the catalog or the room's
/// state decides (an unknown screen, a data rule, a route that does not
/// parse, `NEXT` with no next) is the hub's, which answers the line as it
/// answers any client. What is refused here is either a body that is not
/// a change (`400`) or data the line protocol could not carry (`422`).
public struct JSONChangeBody: Equatable, Sendable {
    /// The change's verb: one of `Verb.mutations`.
    public var verb: Verb
    /// The line without `IF` and without its line break: `PUSH blue hi`.
    public var line: String

    /// Why a body was refused, and how the HTTP answer says it.
    public struct Refusal: Error, Equatable, Sendable {
        /// 400 for a body that is not a change, 422 for a change the line protocol refuses.
        public var status: Int
        public var error: ProtocolError

        init(_ status: Int, _ code: ErrorCode, _ message: String) {
            self.status = status
            error = ProtocolError(code, message)
        }
    }

    /// The largest body taken; more is `413` before it is read.
    public static let maxBodyBytes = 8 * 1024

    /// The line a guarded change is sent as: `IF <rev> <line>`.
    public func requestLine(ifRevision: UInt64?) -> String {
        guard let ifRevision else { return line }
        return Verb.guarded.line(String(ifRevision), line)
    }

    /// Reads `body`. `maxLineBytes` is the daemon's `--max-line`: a change
    /// whose line would be longer is refused as the line protocol would.
    public static func parse(_ body: [UInt8], maxLineBytes: Int) -> Result<JSONChangeBody, Refusal> {
        Result { () throws(Refusal) in try read(body, maxLineBytes: maxLineBytes) }
    }

    private static func read(_ body: [UInt8], maxLineBytes: Int) throws(Refusal) -> JSONChangeBody {
        let members = try object(body)
        guard let opValue = members["op"] else { throw bad("the body needs an \"op\"; \(opList)") }
        guard case .string(let op) = opValue else { throw bad("\"op\" must be a string; \(opList)") }
        guard let verb = Verb.mutations.first(where: { $0.op == op }) else {
            throw bad("\"op\" \(JSONText.quoted(op)) is not a change; \(opList)")
        }
        let names = memberNames(for: verb.row.arguments)
        for (name, value) in members where name != "op" {
            guard names.contains(name) else {
                let takes = names.isEmpty ? "no other members" : names.map { "\"\($0)\"" }.joined(separator: " and ")
                throw bad("\(JSONText.quoted(name)) is not a member of a \(op) change (it takes \(takes))")
            }
            guard case .string = value else { throw bad("\"\(name)\" must be a string") }
        }
        let parts = names.map { name -> String? in
            if case .string(let text)? = members[name] { return text }
            return nil
        }
        try checkParts(parts, names: names, verb: verb)
        let line = verb.line(parts: parts)
        guard line.utf8.count <= maxLineBytes else {
            throw Refusal(422, .badArgs, "the change as a line (\(line.utf8.count) bytes) is longer than "
                          + "the daemon's --max-line of \(maxLineBytes) bytes")
        }
        return JSONChangeBody(verb: verb, line: line)
    }

    /// The members a verb's arguments take, in the order they follow it on the line.
    static func memberNames(for arguments: Verb.Arguments) -> [String] {
        switch arguments {
        case .screenAndData: return ["screen", "data"]
        case .data: return ["data"]
        case .route: return ["route"]
        default: return []
        }
    }

    /// The parts must reach the hub as the very arguments sent: a screen
    /// or a route is one token, data one line of text.
    private static func checkParts(_ parts: [String?], names: [String], verb: Verb) throws(Refusal) {
        for (name, part) in zip(names, parts) {
            switch name {
            case "screen", "route":
                guard let part, !part.isEmpty else { throw bad("a \(verb.op) change needs a non-empty \"\(name)\"") }
                if RequestArguments.holdsBlankOrBreak(part) || hasControlCharacter(part) {
                    throw name == "screen"
                        ? Refusal(422, .unknownScreen, "no screen named \(JSONText.quoted(part)); see SCREENS")
                        : Refusal(422, .badRoute, "a route has no blanks or control characters (encode them as %20)")
                }
            default:
                if let part, hasControlCharacter(part) {
                    throw Refusal(422, .badArgs, "data cannot hold control characters")
                }
            }
        }
    }

    static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    private static let opList = "one of " + Verb.mutations.map { "\"\($0.op)\"" }.joined(separator: ", ")

    private static func bad(_ message: String) -> Refusal { Refusal(400, .badArgs, message) }

    // MARK: - The object's members

    /// Strict JSON (no trailing commas, no member twice), and one object.
    /// The strict parser's value is the one read: the body is parsed once.
    private static func object(_ body: [UInt8]) throws(Refusal) -> [String: JSONValue] {
        let value: JSONValue
        do {
            value = try StrictJSON.parse(body)
        } catch {
            throw bad("the body is not JSON: \(error.description)")
        }
        guard case .object(let members) = value else {
            throw bad("the body must be one JSON object, such as {\"op\":\"push\",\"screen\":\"blue\"}")
        }
        return members
    }
}
