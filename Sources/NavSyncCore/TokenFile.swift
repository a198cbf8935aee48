/// The `--token-file` format both binaries read: the secret is the file's
/// first line, without the blanks around it. The reading itself is passed
/// in, so the core stays free of IO.
public enum TokenFile {
    /// Why no token came out of the file, already phrased for the user.
    public struct Problem: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// - Parameter readAll: the whole file, or nil when it does not exist.
    public static func read(_ path: String, using readAll: (String) throws -> [UInt8]?) -> Result<String, Problem> {
        let bytes: [UInt8]?
        do {
            bytes = try readAll(path)
        } catch {
            return .failure(Problem(description: "token file \(path): cannot read: \(error)"))
        }
        guard let bytes else { return .failure(Problem(description: "token file \(path): no such file")) }
        guard let token = token(in: bytes) else {
            return .failure(Problem(description: "token file \(path): the first line is empty"))
        }
        return .success(token)
    }

    /// The first line (`\n` or `\r\n`), trimmed of spaces and tabs; nil when that leaves nothing.
    public static func token(in bytes: [UInt8]) -> String? {
        var line = bytes.prefix { $0 != UInt8(ascii: "\n") }
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        let token = CommandParser.trimBlanks(Substring(String(decoding: line, as: UTF8.self)))
        return token.isEmpty ? nil : String(token)
    }
}
