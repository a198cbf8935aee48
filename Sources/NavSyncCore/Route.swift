/// The path form of a room's navigation: the stack as `/viewA/viewB:some%20data`,
/// then each sheet introduced by `#`, as in `/red/green#blue:a%20note#red`.
/// Data is percent-encoded so a route is one token with no spaces, slashes,
/// colons or `#` of its own; everything outside `A-Z a-z 0-9 - . _ ~` is
/// escaped. A navigation without sheets is written exactly as in version 1.
public enum Route {
    public static func encode(_ stack: [RouteEntry], sheets: [RouteEntry] = []) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((stack.count + sheets.count) * 8)
        for entry in stack { append(entry, after: UInt8(ascii: "/"), to: &out) }
        for entry in sheets { append(entry, after: UInt8(ascii: "#"), to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    public static func encode(_ navigation: Navigation) -> String {
        encode(navigation.stack, sheets: navigation.sheets)
    }

    private static func append(_ entry: RouteEntry, after separator: UInt8, to out: inout [UInt8]) {
        out.append(separator)
        out.append(contentsOf: entry.screen.utf8)
        if let data = entry.data {
            out.append(UInt8(ascii: ":"))
            percentEncode(data, into: &out)
        }
    }

    /// Parses a route without consulting a catalog: names must only be
    /// well-formed. Whether they exist is the caller's question.
    public static func decode(_ text: some StringProtocol) -> Result<Navigation, RouteError> {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return .failure(.missingLeadingSlash) }
        let hash = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        guard hash > 1 else { return .failure(.empty) }
        var navigation = Navigation(stack: [])
        do throws(RouteError) {
            for segment in bytes[1..<hash].split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
                guard !segment.isEmpty else { throw .emptySegment }
                navigation.stack.append(try entry(segment))
            }
            guard hash < bytes.endIndex else { return .success(navigation) }
            for segment in bytes[(hash + 1)...].split(separator: UInt8(ascii: "#"), omittingEmptySubsequences: false) {
                guard !segment.isEmpty else { throw .emptySheet }
                guard !segment.contains(UInt8(ascii: "/")) else { throw .sheetWithSlash }
                navigation.sheets.append(try entry(segment))
            }
        } catch {
            return .failure(error)
        }
        return .success(navigation)
    }

    /// `name` or `name:data`, the part between two separators.
    private static func entry(_ segment: ArraySlice<UInt8>) throws(RouteError) -> RouteEntry {
        let colon = segment.firstIndex(of: UInt8(ascii: ":"))
        let name = segment[segment.startIndex..<(colon ?? segment.endIndex)]
        guard name.count <= Names.maxLength, !name.isEmpty, name.allSatisfy(Names.isNameByte) else {
            throw .badName(String(decoding: name, as: UTF8.self))
        }
        var data: String?
        if let colon { data = try percentDecode(segment[(colon + 1)...]).get() }
        return RouteEntry(screen: String(decoding: name, as: UTF8.self), data: data)
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
    /// `/red#`, `/red##blue`: a `#` must be followed by one entry.
    case emptySheet
    /// `/red#blue/green`: a sheet is a single entry.
    case sheetWithSlash

    public var description: String {
        switch self {
        case .missingLeadingSlash: return "a route starts with /"
        case .empty: return "a route names at least one screen"
        case .emptySegment: return "a route has no empty segments (// or a trailing /)"
        case .badName(let name): return "\"\(name)\" is not a well-formed screen name"
        case .badEscape: return "a % must be followed by two hex digits"
        case .notUTF8: return "decoded data is not valid UTF-8"
        case .emptySheet: return "a # is followed by one screen (no empty sheets)"
        case .sheetWithSlash: return "a sheet is one screen; no / after a #"
        }
    }
}
