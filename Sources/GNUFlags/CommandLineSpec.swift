/// GNU-style command-line reading shared by `navsyncd`, `navsync` and `navsync-bench`:
/// `--name value`, `--name=value`, bare switches, `--` ending the flags.
/// It knows nothing of what the flags mean; each binary validates values.
public struct CommandLineSpec: Sendable {
    /// Long names (without `--`) that take a value.
    public var valued: Set<String>
    /// Long names that are plain switches.
    public var switches: Set<String>
    /// Single-letter aliases, e.g. `h` → `help`.
    public var shortAliases: [Character: String]

    public init(valued: Set<String>, switches: Set<String>, shortAliases: [Character: String] = [:]) {
        self.valued = valued
        self.switches = switches
        self.shortAliases = shortAliases
    }

    public struct Parsed: Sendable, Equatable {
        /// In the order given; a repeatable flag appears once per use.
        public var flags: [(name: String, value: String?)]
        public var positionals: [String]

        public func values(_ name: String) -> [String] { flags.filter { $0.name == name }.compactMap(\.value) }
        public func last(_ name: String) -> String? { values(name).last }
        public func has(_ name: String) -> Bool { flags.contains { $0.name == name } }

        public static func == (a: Parsed, b: Parsed) -> Bool {
            a.positionals == b.positionals && a.flags.map(\.name) == b.flags.map(\.name)
                && a.flags.map(\.value) == b.flags.map(\.value)
        }
    }

    /// A usage mistake; the binaries print it with a hint and exit 64.
    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// Reads arguments (without the program name). Flags and positionals may
    /// be mixed; everything after `--` is positional.
    public func parse(_ arguments: [String]) throws(UsageError) -> Parsed {
        var result = Parsed(flags: [], positionals: [])
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            if argument == "--" {
                result.positionals.append(contentsOf: arguments[i...])
                break
            }
            var name: String
            var inlineValue: String?
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                if let eq = body.firstIndex(of: "=") {
                    name = String(body[..<eq])
                    inlineValue = String(body[body.index(after: eq)...])
                } else {
                    name = String(body)
                }
            } else if argument.count == 2, argument.hasPrefix("-"), let alias = shortAliases[argument.last!] {
                name = alias
            } else if argument.hasPrefix("-") && argument.count > 1 {
                throw UsageError("unknown option \(argument)")
            } else {
                result.positionals.append(argument)
                continue
            }
            if valued.contains(name) {
                if let inlineValue {
                    result.flags.append((name, inlineValue))
                } else {
                    guard i < arguments.count else { throw UsageError("--\(name) needs a value") }
                    result.flags.append((name, arguments[i]))
                    i += 1
                }
            } else if switches.contains(name) {
                guard inlineValue == nil else { throw UsageError("--\(name) takes no value") }
                result.flags.append((name, nil))
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
        return result
    }

    /// A positive whole number, as every numeric limit must be.
    public static func positiveInt(_ text: String, flag: String, minimum: Int = 1) throws(UsageError) -> Int {
        guard let value = Int(text), value >= minimum else {
            throw UsageError("--\(flag) needs a whole number of at least \(minimum), not '\(text)'")
        }
        return value
    }
}
