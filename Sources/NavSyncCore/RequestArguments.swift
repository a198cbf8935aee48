/// What a client may put after a verb so that the daemon reads back exactly
/// those arguments: the writing side of `CommandParser`'s rules. The parser
/// splits a token at a blank (space or tab, matched byte-wise) and the framer
/// ends a line at a line break, so a token must hold neither and free text
/// must hold no line break, or one argument would turn into two, or a line
/// into two commands.
///
/// Only the shape is judged here; the catalog's names and data rules stay
/// with the daemon, which answers a wrong one with its own `ERR`.
public enum RequestArguments {
    /// A `\n` or `\r`, which would end the line early.
    public static func holdsLineBreak<S: StringProtocol>(_ text: S) -> Bool {
        text.utf8.contains { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
    }

    /// A blank (where the parser splits tokens) or a line break.
    public static func holdsBlankOrBreak<S: StringProtocol>(_ text: S) -> Bool {
        text.utf8.contains { CommandParser.isBlank($0) || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
    }

    static let dataProblem = "data cannot contain a line break"
}

extension Verb {
    /// Why `parts`, in the order this verb's `Arguments` take them (a screen,
    /// then data; a route; a room; text), cannot follow the verb on one line;
    /// nil when they can. `IF`'s change is judged by `guardProblem` and its
    /// own verb.
    public func argumentProblem(_ parts: [String?]) -> String? {
        let first = parts.first.flatMap { $0 } ?? ""
        let second = parts.dropFirst().first.flatMap { $0 } ?? ""
        switch row.arguments {
        case .none, .guardedMutation:
            return nil
        case .screenAndData:
            if first.isEmpty { return "a screen name is needed" }
            if RequestArguments.holdsBlankOrBreak(first) { return "a screen name has no spaces or line breaks" }
            return RequestArguments.holdsLineBreak(second) ? RequestArguments.dataProblem : nil
        case .data, .text:
            return RequestArguments.holdsLineBreak(first) ? RequestArguments.dataProblem : nil
        case .route:
            if first.isEmpty { return "a route is needed, such as /red/blue" }
            if RequestArguments.holdsBlankOrBreak(first) { return "a route has no spaces or line breaks (encode them as %20)" }
            return nil
        case .room:
            return Names.isValid(first) ? nil : "room names are 1-64 characters of A-Z a-z 0-9 _ . -"
        case .secret:
            if first.isEmpty { return "a token is needed" }
            return RequestArguments.holdsLineBreak(first) ? "a token cannot contain a line break" : nil
        case .optionalToken:
            return RequestArguments.holdsBlankOrBreak(first) ? "\(rawValue) takes at most one word" : nil
        case .memberName:
            return Names.isValidMemberName(first) ? nil : Names.memberNameRule
        case .optionalRevision:
            let isRevision = first.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } && UInt64(first) != nil
            return first.isEmpty || isRevision ? nil : "a revision is a whole number below 2^64"
        }
    }

    /// Why `IF` cannot guard `change`; nil for a mutation.
    public static func guardProblem(_ change: Verb) -> String? {
        change.row.isMutation ? nil : "IF guards a change, not \(change.rawValue)"
    }
}
