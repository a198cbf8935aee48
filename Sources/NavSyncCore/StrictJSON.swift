/// Checks that bytes are one JSON text exactly as RFC 8259 writes the
/// grammar, before a decoder sees them. Foundation's decoders on Linux take
/// more than JSON (a trailing comma in an object or array, for one), and a
/// file users write by hand should be refused for a mistake, not read in a
/// way the next tool might not.
///
/// Beyond the grammar it refuses a `\u` escape of half a surrogate pair (no
/// character; Foundation refuses it too), a member name given twice in one object
/// (RFC 8259 leaves the outcome to the reader, and the decoder would keep
/// one of the two silently) and nesting deeper than `maxDepth`. A leading
/// UTF-8 byte order mark is skipped, as the RFC allows a reader to do.
public enum StrictJSON {
    /// Where the text stops being JSON, for a person to find it.
    public struct SyntaxError: Error, Equatable, CustomStringConvertible {
        /// 1-based line, and 1-based byte within that line.
        public var line: Int
        public var column: Int
        public var problem: String

        public var description: String { "line \(line) column \(column): \(problem)" }
    }

    /// Arrays and objects inside each other. The formats read with this
    /// need three; the bound keeps a hostile file from using the stack.
    public static let maxDepth = 32

    public static func validate(_ bytes: [UInt8]) throws(SyntaxError) {
        _ = try parse(bytes)
    }

    /// The one JSON value the bytes hold, checked as `validate` checks them.
    /// Numbers become `Double` (a literal too large for one is `infinity`,
    /// which callers that need a finite number refuse).
    public static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> JSONValue {
        var reader = Reader(bytes: bytes)
        return try reader.document()
    }

    private struct Reader {
        let bytes: [UInt8]
        var at = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { at = 3 }
        }

        mutating func document() throws(SyntaxError) -> JSONValue {
            guard String(validating: bytes, as: UTF8.self) != nil else {
                throw SyntaxError(line: 1, column: 1, problem: "the text is not UTF-8")
            }
            skipBlanks()
            let result = try value(depth: 0)
            skipBlanks()
            if at < bytes.count { throw failure("more text after the JSON value") }
            return result
        }

        // MARK: - Values

        mutating func value(depth: Int) throws(SyntaxError) -> JSONValue {
            guard let byte = peek else { throw failure("the text ends where a value should be") }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(String(decoding: try string(), as: UTF8.self))
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            default: throw failure("expected a value (object, array, string, number, true, false or null)")
            }
        }

        mutating func object(depth: Int) throws(SyntaxError) -> JSONValue {
            var names: Set<[UInt8]> = []
            var members: [String: JSONValue] = [:]
            try self.members(depth: depth, close: UInt8(ascii: "}"), memberWord: "a member") { reader throws(SyntaxError) in
                guard reader.peek == UInt8(ascii: "\"") else { throw reader.failure("expected a member name in double quotes") }
                let nameStart = reader.at
                let name = try reader.string()
                guard names.insert(name).inserted else {
                    reader.at = nameStart
                    throw reader.failure("the member name \"\(String(decoding: name, as: UTF8.self))\" appears twice in one object")
                }
                reader.skipBlanks()
                guard reader.peek == UInt8(ascii: ":") else { throw reader.failure("expected : after a member name") }
                reader.at += 1
                reader.skipBlanks()
                members[String(decoding: name, as: UTF8.self)] = try reader.value(depth: depth)
            }
            return .object(members)
        }

        mutating func array(depth: Int) throws(SyntaxError) -> JSONValue {
            var elements: [JSONValue] = []
            try self.members(depth: depth, close: UInt8(ascii: "]"), memberWord: "an element") { reader throws(SyntaxError) in
                elements.append(try reader.value(depth: depth))
            }
            return .array(elements)
        }

        /// The frame objects and arrays share: the opening bracket, then
        /// nothing or `member`s separated by commas, then `close`. A comma
        /// right before `close` is refused, as RFC 8259 has no trailing commas.
        mutating func members(depth: Int, close: UInt8, memberWord: String,
                              _ member: (inout Reader) throws(SyntaxError) -> Void) throws(SyntaxError) {
            try checkDepth(depth)
            at += 1
            skipBlanks()
            if peek == close { at += 1; return }
            let closeText = String(UnicodeScalar(close))
            while true {
                try member(&self)
                skipBlanks()
                switch peek {
                case UInt8(ascii: ","):
                    at += 1
                    skipBlanks()
                    if peek == close { throw failure("a comma before \(closeText) (JSON has no trailing commas)") }
                case close:
                    at += 1
                    return
                default:
                    throw failure("expected , or \(closeText) after \(memberWord)")
                }
            }
        }

        /// Reads a string and returns its value as UTF-8, escapes decoded,
        /// so that two spellings of one member name compare equal.
        mutating func string() throws(SyntaxError) -> [UInt8] {
            at += 1
            var value: [UInt8] = []
            while true {
                guard let byte = peek else { throw failure("a string is not closed") }
                switch byte {
                case UInt8(ascii: "\""):
                    at += 1
                    return value
                case UInt8(ascii: "\\"):
                    at += 1
                    try escape(into: &value)
                case 0x00..<0x20:
                    throw failure("a control character in a string (write it as an escape such as \\n)")
                default:
                    value.append(byte)
                    at += 1
                }
            }
        }

        mutating func escape(into value: inout [UInt8]) throws(SyntaxError) {
            guard let byte = peek else { throw failure("a string is not closed") }
            at += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): value.append(byte)
            case UInt8(ascii: "b"): value.append(0x08)
            case UInt8(ascii: "f"): value.append(0x0C)
            case UInt8(ascii: "n"): value.append(0x0A)
            case UInt8(ascii: "r"): value.append(0x0D)
            case UInt8(ascii: "t"): value.append(0x09)
            case UInt8(ascii: "u"):
                let escapeStart = at - 2
                var unit = try hexUnit()
                if (0xD800..<0xDC00).contains(unit), bytes[at...].starts(with: "\\u".utf8) {
                    at += 2
                    let low = try hexUnit()
                    if (0xDC00..<0xE000).contains(low) { unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00) }
                }
                // A surrogate left alone is no character: the grammar lets it
                // through, but it cannot become a string, and Foundation refuses it.
                guard let scalar = Unicode.Scalar(unit) else {
                    at = escapeStart
                    throw failure("a \\u escape holds half of a surrogate pair")
                }
                value.append(contentsOf: String(Character(scalar)).utf8)
            default:
                at -= 2
                throw failure("an unknown escape in a string (only \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
            }
        }

        mutating func hexUnit() throws(SyntaxError) -> UInt32 {
            var unit: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = peek, let digit = Self.hexValue(byte) else {
                    throw failure("\\u must be followed by four hex digits")
                }
                unit = unit << 4 | digit
                at += 1
            }
            return unit
        }

        mutating func number() throws(SyntaxError) -> Double {
            let start = at
            if peek == UInt8(ascii: "-") { at += 1 }
            guard let first = peek, Self.isDigit(first) else { throw failure("a number needs a digit here") }
            at += 1
            if first == UInt8(ascii: "0"), let next = peek, Self.isDigit(next) {
                throw failure("a number cannot start with 0 followed by more digits")
            }
            skipDigits()
            if peek == UInt8(ascii: ".") {
                at += 1
                guard let digit = peek, Self.isDigit(digit) else { throw failure("a digit must follow the decimal point") }
                skipDigits()
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                at += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { at += 1 }
                guard let digit = peek, Self.isDigit(digit) else { throw failure("a digit must follow the exponent") }
                skipDigits()
            }
            // The grammar above is a subset of what Double's parser reads.
            return Double(String(decoding: bytes[start..<at], as: UTF8.self)) ?? .nan
        }

        mutating func literal(_ word: String) throws(SyntaxError) {
            guard bytes[at...].starts(with: word.utf8) else { throw failure("expected a value (did you mean \(word)?)") }
            at += word.utf8.count
        }

        // MARK: - Helpers

        var peek: UInt8? { at < bytes.count ? bytes[at] : nil }

        func checkDepth(_ depth: Int) throws(SyntaxError) {
            if depth > StrictJSON.maxDepth { throw failure("nested deeper than \(StrictJSON.maxDepth) arrays and objects") }
        }

        /// The four blanks JSON allows between tokens; no comments.
        mutating func skipBlanks() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { at += 1 }
        }

        mutating func skipDigits() {
            while let byte = peek, Self.isDigit(byte) { at += 1 }
        }

        static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        static func hexValue(_ byte: UInt8) -> UInt32? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
        }

        /// The error at the current position, located by line and column.
        func failure(_ problem: String) -> SyntaxError {
            let upTo = bytes[..<min(at, bytes.count)]
            let line = upTo.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
            let lineStart = upTo.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
            return SyntaxError(line: line, column: min(at, bytes.count) - lineStart + 1, problem: problem)
        }
    }
}

/// A JSON value as `StrictJSON.parse` reads it. Member names are unique
/// (a repeated one is refused before this is built), so an object is a
/// dictionary.
public enum JSONValue: Sendable, Equatable {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
}
