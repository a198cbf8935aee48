/// The line loop of the files people write by hand for the daemon
/// (`--tokens`, `--token-keys` and the minting side's key file): lines end
/// at `\n` (a `\r` right before it is dropped, for files saved on Windows),
/// fields are separated by runs of spaces or tabs, and blank lines and
/// lines whose first field starts with `#` are skipped (a `#` later on a
/// line is part of it: a token may hold one). Line numbers are 1-based and
/// count every line, skipped ones too, so a problem points where an editor does.
public enum ConfigLineReader {
    /// A line that holds something: its number and its fields.
    public struct Line: Sendable, Equatable {
        public var number: Int
        public var fields: [Substring]

        public init(number: Int, fields: [Substring]) {
            self.number = number
            self.fields = fields
        }
    }

    /// Hands `take` each line that holds something, in file order, and
    /// stops at the first problem: a line that is not UTF-8, or what `take`
    /// throws. Lines after it are not read, so the problem reported is
    /// always the first in the file.
    public static func read(_ bytes: [UInt8], _ take: (Line) throws(ConfigFileProblem) -> Void) throws(ConfigFileProblem) {
        var number = 0
        for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            var line = rawLine[...]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            guard let text = String(validating: line, as: UTF8.self) else {
                throw ConfigFileProblem(line: number, reason: "not valid UTF-8")
            }
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            try take(Line(number: number, fields: fields))
        }
    }
}

/// Why a hand-written file was refused: the 1-based line (0 for the file
/// as a whole) and the reason. The files' readers keep secrets out of it.
public struct ConfigFileProblem: Error, Equatable, Sendable {
    public var line: Int
    public var reason: String

    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }

    /// `FILE:LINE: reason`, or `FILE: reason` for the whole file.
    public func described(file: String) -> String {
        line > 0 ? "\(file):\(line): \(reason)" : "\(file): \(reason)"
    }
}
