/// One line of OpenSSL's key log (the NSS SSLKEYLOGFILE format:
/// `LABEL <client random in hex> <secret in hex>`), which is how a TLS 1.3
/// connection's application traffic secrets leave the handshake so that
/// the records after it can be protected without the handshake's state.
public struct TLSKeyLogLine: Equatable, Sendable {
    public enum Label: String, Sendable {
        case clientTraffic = "CLIENT_TRAFFIC_SECRET_0"
        case serverTraffic = "SERVER_TRAFFIC_SECRET_0"
    }

    public let label: Label
    public let secret: [UInt8]

    /// The line's label and secret, or nil for any other label (handshake
    /// secrets, TLS 1.2's master secret) and for a line that is not well formed.
    public init?(_ line: UnsafeRawBufferPointer) {
        let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard fields.count == 3,
              let label = Label(rawValue: String(decoding: fields[0], as: UTF8.self)),
              fields[1].count == 64, Self.hex(fields[1]) != nil,
              let secret = Self.hex(fields[2]), secret.count == 32 || secret.count == 48 else { return nil }
        self.label = label
        self.secret = secret
    }

    static func hex(_ text: Slice<UnsafeRawBufferPointer>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var high: UInt8?
        for character in text {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return bytes
    }
}
