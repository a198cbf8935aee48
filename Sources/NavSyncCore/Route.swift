/// The path form of a stack: `/viewA/viewB:some%20data`. Data is
/// percent-encoded so a route is one token with no spaces, slashes or colons
/// of its own; everything outside `A-Z a-z 0-9 - . _ ~` is escaped.
public enum Route {
    public static func encode(_ stack: [RouteEntry]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(stack.count * 8)
        for entry in stack {
            out.append(UInt8(ascii: "/"))
            out.append(contentsOf: entry.screen.utf8)
            if let data = entry.data {
                out.append(UInt8(ascii: ":"))
                percentEncode(data, into: &out)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses a route without consulting a catalog: names must only be
    /// well-formed. Whether they exist is the caller's question.
    public static func decode(_ text: some StringProtocol) -> Result<[RouteEntry], RouteError> {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return .failure(.missingLeadingSlash) }
        guard bytes.count > 1 else { return .failure(.empty) }
        var stack: [RouteEntry] = []
        for segment in bytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            guard !segment.isEmpty else { return .failure(.emptySegment) }
            let colon = segment.firstIndex(of: UInt8(ascii: ":"))
            let name = segment[segment.startIndex..<(colon ?? segment.endIndex)]
            guard name.count <= Names.maxLength, !name.isEmpty, name.allSatisfy(Names.isNameByte) else {
                return .failure(.badName(String(decoding: name, as: UTF8.self)))
            }
            var data: String?
            if let colon {
                switch percentDecode(segment[(colon + 1)...]) {
                case .success(let decoded): data = decoded
                case .failure(let error): return .failure(error)
                }
            }
            stack.append(RouteEntry(screen: String(decoding: name, as: UTF8.self), data: data))
        }
        return .success(stack)
    }

    public static func percentEncode(_ text: String, into out: inout [UInt8]) {
        for byte in text.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }

    public static func percentEncode(_ text: String) -> String {
        var out: [UInt8] = []
        percentEncode(text, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Accepts either case of hex; any other byte, `+` included, stands for itself.
    public static func percentDecode(_ bytes: ArraySlice<UInt8>) -> Result<String, RouteError> {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let byte = bytes[i]
            if byte == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex,
                      let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) else {
                    return .failure(.badEscape)
                }
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(byte)
                i += 1
            }
        }
        guard let text = String(validating: out, as: UTF8.self) else { return .failure(.notUTF8) }
        return .success(text)
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    @inline(__always)
    private static func isUnreserved(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// Why a route could not be read; all of them are `bad-route` on the wire.
public enum RouteError: Error, Equatable, CustomStringConvertible {
    case missingLeadingSlash
    case empty
    case emptySegment
    case badName(String)
    case badEscape
    case notUTF8

    public var description: String {
        switch self {
        case .missingLeadingSlash: return "a route starts with /"
        case .empty: return "a route names at least one screen"
        case .emptySegment: return "a route has no empty segments (// or a trailing /)"
        case .badName(let name): return "\"\(name)\" is not a well-formed screen name"
        case .badEscape: return "a % must be followed by two hex digits"
        case .notUTF8: return "decoded data is not valid UTF-8"
        }
    }
}
