/// Text that came from the network, made safe to print on a terminal.
///
/// The daemon checks what it accepts, but a client cannot know which daemon
/// (or which fleet member, or which Redis) a line passed through: an escape
/// sequence inside a name or a route could retitle the terminal, clear it
/// or worse. So every client prints such text through this: C0 controls,
/// DEL and C1 controls become a visible `\xNN`; everything else, backslashes
/// included, is printed as it came, so ordinary output is unchanged. Newlines
/// may be kept, for output that is several lines on purpose.
public enum TerminalSafeText {
    public static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0, keepingNewlines) }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if needsEscape(scalar, keepingNewlines) {
                out.append(contentsOf: "\\x".unicodeScalars)
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out.append(contentsOf: (hex.count < 2 ? "0" + hex : hex).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar, _ keepingNewlines: Bool) -> Bool {
        if keepingNewlines && scalar == "\n" { return false }
        return scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
