/// What a failed TLS connection means for the user, in words: OpenSSL's
/// reasons (`unable to get local issuer certificate`, `wrong version number`)
/// say what broke, not what to do. The advice comes first and OpenSSL's
/// reason stays in parentheses, for whoever has to look further.
public enum TLSFailureWords {
    /// The advice for a failed `tls://` handshake with `host`, or the reason as it was.
    public static func handshake(_ reason: String, host: String) -> String {
        let lower = reason.lowercased()
        let advice: String
        if lower.contains("wrong version number") || lower.contains("packet length too long")
            || lower.contains("unexpected eof") || lower.contains("record layer failure") {
            advice = "this address does not speak TLS: drop tls://"
        } else if lower.contains("local issuer") || lower.contains("self-signed") || lower.contains("self signed")
            || lower.contains("unable to get issuer") || lower.contains("unknown ca") {
            advice = "the certificate is not signed by a known authority — pass --tls-ca FILE for a private CA"
        } else if lower.contains("hostname mismatch") || lower.contains("host name mismatch")
            || lower.contains("does not name") {
            advice = "the certificate does not name \(host) — connect with a name it carries (its SAN), or make a new one"
        } else if lower.contains("expired") || lower.contains("not yet valid") {
            advice = "the certificate is outside its validity dates — renew it, or check this machine's clock"
        } else {
            return reason
        }
        return "\(advice) (\(reason))"
    }

    /// A plain connection answered with TLS bytes (a record header: handshake
    /// 0x16 or alert 0x15, version 3.x) instead of a line: the address speaks TLS.
    public static func looksLikeTLS(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 2 else { return false }
        return (bytes[0] == 0x15 || bytes[0] == 0x16) && bytes[1] == 0x03
    }

    /// What a plain client is told when the daemon answered in TLS on that port.
    public static func speaksTLS(_ endpoint: Endpoint) -> String {
        "this address speaks TLS: use tls://\(endpoint)"
    }
}
