/// base64url without padding (RFC 4648 §5), as JSON Web Tokens and the
/// `--token-keys` file write it. Decoding is strict: only the 64 letters of
/// the URL alphabet, no `=`, no blanks, no length that no encoding has
/// (one letter left over), and the unused low bits of the last letter must be
/// zero, so every byte string has exactly one spelling and a token cannot be
/// altered without changing what it says.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let a = iterator.next() {
            let b = iterator.next()
            let c = b == nil ? nil : iterator.next()
            out.append(alphabet[Int(a >> 2)])
            out.append(alphabet[Int((a & 0x03) << 4 | (b ?? 0) >> 4)])
            guard let b else { break }
            out.append(alphabet[Int((b & 0x0F) << 2 | (c ?? 0) >> 6)])
            guard let c else { break }
            out.append(alphabet[Int(c & 0x3F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes, or nil for anything that is not canonical base64url.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        let remainder = text.count % 4
        guard remainder != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for letter in text {
            guard let value = sextet(letter) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Left-over bits belong to no byte; a canonical encoding leaves them zero.
        guard accumulator == 0 else { return nil }
        return out
    }

    public static func decode(_ text: String) -> [UInt8]? { decode(Array(text.utf8)) }

    private static func sextet(_ letter: UInt8) -> UInt8? {
        switch letter {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return letter - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return letter - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return letter - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }
}
