/// A request line as the debug log shows it. `AUTH`'s argument is the
/// daemon's secret: a log is read by more people, kept longer and copied
/// further than the token file, so the token is replaced before the line is
/// ever formatted, whatever its case, spacing or encoding.
public enum LoggedLine {
    /// Bytes of a line the log shows; the rest of a long line is left out.
    public static let maxBytes = 200

    /// What stands in for the argument of an `AUTH` line.
    public static let redacted = "<redacted>"

    public static func text(_ line: some Collection<UInt8>) -> String {
        let bytes = Array(line)
        let start = bytes.firstIndex(where: { !CommandParser.isBlank($0) }) ?? bytes.endIndex
        let end = bytes[start...].firstIndex(where: CommandParser.isBlank) ?? bytes.endIndex
        let verb = bytes[start..<end]
        guard isAuth(verb) else { return String(decoding: bytes.prefix(maxBytes), as: UTF8.self) }
        let hasArgument = bytes[end...].contains { !CommandParser.isBlank($0) }
        return String(decoding: verb, as: UTF8.self) + (hasArgument ? " " + redacted : "")
    }

    /// The verb compared as the parser does: ASCII letters in any case, bytes otherwise.
    private static func isAuth(_ token: ArraySlice<UInt8>) -> Bool {
        token.count == 4 && zip(token, "AUTH".utf8).allSatisfy { byte, letter in
            byte == letter || byte == letter + 32
        }
    }
}
