// The route codec, both ways. Properties:
//   - decoding arbitrary text never crashes; a decoded route re-encodes to a
//     canonical form made only of unreserved bytes, '/', '#', ':' and '%XX'
//     escapes with uppercase hex, and that form decodes to the same stack
//     and sheets; no '/' follows the first '#';
//     encoding is idempotent through decode;
//   - lowercasing the hex of the canonical form decodes to the same stack;
//   - any stack and sheets of well-formed names and UTF-8 data survive
//     encode → decode.
import NavSyncCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRoute(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    if input.byte() & 1 == 0 {
        decodeArbitrary(input.rest())
    } else {
        encodeBuilt(&input)
    }
    return 0
}

private func decodeArbitrary(_ bytes: [UInt8]) {
    // The parser hands the decoder a token of valid UTF-8; take the text as
    // a client could send it.
    guard let text = String(validating: bytes, as: UTF8.self) else { return }
    guard case .success(let stack) = Route.decode(text) else { return }
    require(!stack.stack.isEmpty, "a decoded route has at least one stack entry", bytes.shown)
    for entry in stack.stack + stack.sheets {
        require(Names.isValid(entry.screen), "decoded names are well-formed", bytes.shown)
        require(entry.data != "", "empty data decodes as none", bytes.shown)
    }
    let canonical = Route.encode(stack)
    requireCanonical(canonical, bytes)
    guard case .success(let again) = Route.decode(canonical) else {
        violated("the canonical form decodes", "\(canonical) from \(bytes.shown)")
    }
    require(again == stack, "canonical form decodes to the same stack", "\(canonical) from \(bytes.shown)")
    require(Route.encode(again) == canonical, "encode is idempotent through decode", canonical)
    let lowered = lowercasingHex(canonical)
    require((try? Route.decode(lowered).get()) == stack, "hex case does not matter", lowered)
}

private func encodeBuilt(_ input: inout FuzzInput) {
    let nameBytes = Array("ABCXYZabcxyz0189_.-".utf8)
    var stack = Navigation(stack: [])
    let depth = 1 + Int(input.byte() % 8)
    let sheets = Int(input.byte() % 4)
    for index in 0..<(depth + sheets) {
        let nameLength = 1 + Int(input.byte() % 64)
        let name = String(decoding: (0..<nameLength).map { _ in nameBytes[Int(input.byte()) % nameBytes.count] },
                          as: UTF8.self)
        let dataLength = Int(input.byte() % 24)
        let raw = (0..<dataLength).map { _ in input.byte() }
        // Arbitrary bytes made valid: invalid sequences become U+FFFD.
        let data = String(decoding: raw, as: UTF8.self)
        let entry = RouteEntry(screen: name, data: data)
        if index < depth { stack.stack.append(entry) } else { stack.sheets.append(entry) }
    }
    let encoded = Route.encode(stack)
    requireCanonical(encoded, Array(encoded.utf8))
    guard case .success(let decoded) = Route.decode(encoded) else {
        violated("an encoded stack decodes", encoded)
    }
    require(decoded == stack, "encode → decode gives the stack back", encoded)
}

/// Only unreserved bytes, '/', '#', ':' and '%' followed by two uppercase hex
/// digits; no '/' after a '#'.
private func requireCanonical(_ route: String, _ from: [UInt8]) {
    let bytes = Array(route.utf8)
    require(bytes.first == UInt8(ascii: "/"), "a route starts with /", route)
    if let hash = bytes.firstIndex(of: UInt8(ascii: "#")) {
        require(!bytes[hash...].contains(UInt8(ascii: "/")), "sheets hold no /", "\(route) from \(from.shown)")
    }
    var i = 0
    while i < bytes.count {
        let b = bytes[i]
        if b == UInt8(ascii: "%") {
            require(i + 2 < bytes.count && isUpperHex(bytes[i + 1]) && isUpperHex(bytes[i + 2]),
                    "escapes are %XX in uppercase", "\(route) from \(from.shown)")
            i += 3
            continue
        }
        require(isUnreserved(b) || b == UInt8(ascii: "/") || b == UInt8(ascii: "#") || b == UInt8(ascii: ":"),
                "a canonical route holds only unreserved bytes, / # : and escapes", "\(route) from \(from.shown)")
        i += 1
    }
}

private func isUpperHex(_ b: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(b)
}

private func isUnreserved(_ b: UInt8) -> Bool {
    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b)
        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || Array("-._~".utf8).contains(b)
}

private func lowercasingHex(_ route: String) -> String {
    var bytes = Array(route.utf8)
    var i = 0
    while i < bytes.count {
        if bytes[i] == UInt8(ascii: "%") {
            for j in (i + 1)...(i + 2) where (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(bytes[j]) {
                bytes[j] += 32
            }
            i += 3
        } else {
            i += 1
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}
