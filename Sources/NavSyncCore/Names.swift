/// Room and screen names share one rule: 1 to 64 bytes of `A-Z a-z 0-9 _ . -`.
/// Keeping them this plain means they never need escaping in a route or a log.
public enum Names {
    public static let maxLength = 64

    /// The room every connection starts in, and the one `JOIN` needs not name.
    public static let defaultRoom = "main"

    public static func isValid<S: StringProtocol>(_ name: S) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        return bytes.allSatisfy(isNameByte)
    }

    @inline(__always)
    static func isNameByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    /// A member's display name (`NAME`, a grant's `<name>`): 1 to 64
    /// bytes of `A-Z a-z 0-9 _ . @ -`.
    public static func isValidMemberName<S: StringProtocol>(_ name: S) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        return bytes.allSatisfy { isNameByte($0) || $0 == UInt8(ascii: "@") }
    }

    /// What `NAME` and the clients say when a name breaks the rule.
    public static let memberNameRule = "names are 1-64 characters of A-Z a-z 0-9 _ . @ -"
}
