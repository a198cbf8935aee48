/// WebSocket frames as a client writes them (masked) and reads them.
enum WebSocketWire {
    struct Frame: Equatable {
        var opcode: UInt8
        var payload: [UInt8]
        var text: String { String(decoding: payload, as: UTF8.self) }
        /// A close frame's status code.
        var closeCode: UInt16? {
            guard opcode == 0x8, payload.count >= 2 else { return nil }
            return UInt16(payload[0]) << 8 | UInt16(payload[1])
        }
    }

    /// A masked client frame (payloads under 64 KiB).
    static func client(_ opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        var bytes: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            bytes.append(0x80 | UInt8(payload.count))
        } else {
            bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        bytes += mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return bytes
    }

    static func text(_ message: String) -> [UInt8] { client(0x1, Array(message.utf8)) }

    static func close(_ code: UInt16) -> [UInt8] { client(0x8, [UInt8(code >> 8), UInt8(code & 0xFF)]) }

    /// The server's (unmasked) frames in `bytes`.
    static func frames(_ bytes: [UInt8]) -> [Frame] {
        var found: [Frame] = []
        var at = 0
        while at + 2 <= bytes.count {
            var length = Int(bytes[at + 1] & 0x7F)
            var start = at + 2
            if length == 126 {
                guard start + 2 <= bytes.count else { break }
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
                start += 2
            } else if length == 127 {
                guard start + 8 <= bytes.count else { break }
                length = bytes[start..<start + 8].reduce(0) { $0 << 8 | Int($1) }
                start += 8
            }
            guard start + length <= bytes.count else { break }
            found.append(Frame(opcode: bytes[at] & 0x0F, payload: Array(bytes[start..<start + length])))
            at = start + length
        }
        return found
    }
}
