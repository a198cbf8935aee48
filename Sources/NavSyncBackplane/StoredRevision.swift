import RedisClient

/// A room's revision as Redis hands it back (a field of the state hash, a
/// stream id, a published message, the change function's answer). Redis
/// holds whatever was written to it, by this daemon or by hand, so the text
/// is checked before it is believed: plain decimal digits as this daemon
/// writes them, and below the largest 64-bit value, where a room could never
/// change again (its next revision does not exist). Anything else makes the
/// room unreadable, never the daemon.
enum StoredRevision {
    /// The largest revision a room in Redis may hold.
    static let largest = UInt64.max - 1

    /// The revision `text` spells, or nil when it is not one this daemon
    /// would have written: a sign, leading zeros, anything but digits, or a
    /// value past `largest`.
    static func parse<Text: StringProtocol>(_ text: Text) -> UInt64? {
        let digits = text.utf8
        guard let first = digits.first, digits.count <= 20,
              digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              first != UInt8(ascii: "0") || digits.count == 1,
              let value = UInt64(text), value <= largest else { return nil }
        return value
    }

    /// A revision field of a reply: a missing field (nil) is a room never
    /// changed, revision 0; nil when the field holds no valid revision.
    static func parse(field reply: RedisReply) -> UInt64? {
        switch reply {
        case .null: return 0
        case .integer(let value): return value >= 0 && UInt64(value) <= largest ? UInt64(value) : nil
        default: return reply.text.flatMap { parse($0) }
        }
    }
}
