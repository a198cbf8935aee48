/// The `--tokens` file: one grant a line, `ROLE ROOMS TOKEN [NAME]`,
/// fields separated by runs of spaces or tabs; blank lines and lines whose
/// first non-blank character is `#` are ignored (a `#` later on a line is
/// part of it: tokens may hold one). The whole file is judged before any of
/// it is used, so a reload either takes every line or none.
public enum GrantsFile {
    /// A token shorter than this is refused: it could be guessed.
    public static let shortestToken = 16

    /// One grant and the token that unlocks it.
    public struct Entry: Sendable, Equatable {
        public var token: String
        public var grant: Grant

        public init(token: String, grant: Grant) {
            self.token = token
            self.grant = grant
        }
    }

    /// Why the file was refused: the line and the reason. Never holds a token.
    public typealias Problem = ConfigFileProblem

    /// Every grant in the file, in file order.
    public static func parse(_ bytes: [UInt8]) -> Result<[Entry], Problem> {
        var entries: [Entry] = []
        var firstLineOfToken: [String: Int] = [:]
        do {
            try ConfigLineReader.read(bytes) { line throws(Problem) in
                let entry: Entry
                switch self.entry(line.fields) {
                case .success(let parsed): entry = parsed
                case .failure(let reason): throw Problem(line: line.number, reason: reason.text)
                }
                if let earlier = firstLineOfToken[entry.token] {
                    throw Problem(line: line.number, reason: "the token of line \(earlier) again; tokens must be unique")
                }
                firstLineOfToken[entry.token] = line.number
                entries.append(entry)
            }
        } catch {
            return .failure(error)
        }
        return .success(entries)
    }

    private struct Reason: Error { var text: String }

    private static func entry(_ fields: [Substring]) -> Result<Entry, Reason> {
        guard fields.count == 3 || fields.count == 4 else {
            return .failure(Reason(text: "expected ROLE ROOMS TOKEN [NAME], found \(fields.count) fields"))
        }
        guard let role = Role(rawValue: String(fields[0])), role != .none else {
            return .failure(Reason(text: "the role is control or view (the field is not quoted here: it may be a misplaced token)"))
        }
        let rooms: Grant.Rooms
        if fields[1] == "*" {
            rooms = .every
        } else {
            let names = fields[1].split(separator: ",", omittingEmptySubsequences: false)
            guard names.allSatisfy(Names.isValid) else {
                return .failure(Reason(text: "rooms are * or a comma-separated list of room names (A-Z a-z 0-9 _ . -, 1-64 each)"))
            }
            rooms = .only(Set(names.map(String.init)))
        }
        let token = fields[2]
        // The reasons never quote the token: the message goes to the log.
        guard token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(Reason(text: "the token must be printable ASCII without spaces"))
        }
        guard token.utf8.count >= shortestToken else {
            return .failure(Reason(text: "the token is shorter than \(shortestToken) characters"))
        }
        var name = role.rawValue
        if fields.count == 4 {
            guard Names.isValidMemberName(fields[3]) else {
                return .failure(Reason(text: "the name is 1-64 characters of A-Z a-z 0-9 _ . @ -"))
            }
            name = String(fields[3])
        }
        return .success(Entry(token: String(token), grant: Grant(role: role, rooms: rooms, name: name)))
    }
}
