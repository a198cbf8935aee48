/// What the daemon says to Redis with `AUTH` on every connection: a
/// password (`requirepass`, or the default user's) or an ACL user and its
/// password. Read from `--backplane-auth FILE`, never from the command
/// line, and never shown: `description` names the user only.
public struct RedisCredentials: Sendable, Equatable, CustomStringConvertible {
    public var user: String?
    public var password: String

    public init(user: String?, password: String) {
        self.user = user
        self.password = password
    }

    /// The file's first line: `PASSWORD` or `USER PASSWORD` (blanks around
    /// them dropped). The reason of a failure never quotes the line.
    public static func parse(_ bytes: [UInt8]) -> Result<RedisCredentials, Problem> {
        var line = bytes.prefix { $0 != UInt8(ascii: "\n") }
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        guard let text = String(validating: line, as: UTF8.self) else {
            return .failure(Problem(reason: "the first line is not valid UTF-8"))
        }
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        switch fields.count {
        case 1: return .success(RedisCredentials(user: nil, password: fields[0]))
        case 2: return .success(RedisCredentials(user: fields[0], password: fields[1]))
        case 0: return .failure(Problem(reason: "the first line is empty"))
        default: return .failure(Problem(reason: "the first line is PASSWORD or USER PASSWORD, not \(fields.count) words"))
        }
    }

    public struct Problem: Error, Equatable, Sendable {
        public var reason: String
    }

    /// The `AUTH` command's arguments.
    var authArguments: [[UInt8]] {
        [Array("AUTH".utf8)] + (user.map { [Array($0.utf8)] } ?? []) + [Array(password.utf8)]
    }

    public var description: String { user.map { "ACL user \($0)" } ?? "a password" }
}
