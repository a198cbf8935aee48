/// Pieces of JSON text written by hand, for documents whose members must
/// come in a fixed order (Foundation's encoder on Linux orders an object's
/// keys as it likes) and for bytes built on the hot path without a
/// `Codable` round trip.
public enum JSONText {
    /// `text` as a JSON string literal: quote, backslash and the control
    /// characters escaped (the short escapes where JSON has one), slashes
    /// and everything else as UTF-8.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case "\u{00}"..."\u{1F}":
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// `{"error":"<code>","message":"<message>"}`, every error body of the HTTP API.
    public static func error(code: String, message: String) -> String {
        "{\"error\":\(quoted(code)),\"message\":\(quoted(message))}"
    }
}
