/// A room's revision as an HTTP entity tag: `"REV"`, strong, one quoted
/// decimal. `GET /rooms/NAME` sends it; `If-None-Match` turns a read of an
/// unchanged room into `304`, and `If-Match` guards a change as `IF REV`.
public enum EntityTag {
    public static func header(_ revision: UInt64) -> String { "\"\(revision)\"" }

    /// `If-Match`: exactly one quoted decimal revision below 2^64; nil for
    /// anything else (a list, `*`, a weak tag, no quotes), which is `400`.
    public static func ifMatchRevision(_ value: String) -> UInt64? {
        revision(in: Substring(value).trimmingBlanks())
    }

    /// `If-None-Match`: true when one of its tags names `revision` (weak
    /// tags compare as strong ones here, as RFC 9110 says for this header)
    /// or it is `*`. Tags that are not revisions never match.
    public static func noneMatchHits(_ value: String, revision: UInt64) -> Bool {
        for item in value.split(separator: ",") {
            var tag = item.trimmingBlanks()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            if Self.revision(in: tag) == revision { return true }
        }
        return false
    }

    private static func revision(in tag: Substring) -> UInt64? {
        let bytes = Array(tag.utf8)
        guard bytes.count >= 3, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return nil }
        let digits = bytes[1..<bytes.count - 1]
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return UInt64(String(decoding: digits, as: UTF8.self))
    }
}
