/// Who may talk to the daemon over HTTP: the `Host` check against DNS
/// rebinding and the `Origin` check for WebSocket upgrades.
public struct WebAccess: Sendable, Equatable {
    /// Normalised `--allow-origin` values: `scheme://host[:port]`, lowercase,
    /// no trailing slash.
    public let allowedOrigins: [String]
    /// The host part of each allowed origin, lowercase, without port.
    let allowedHosts: [String]

    public init(allowedOrigins: [String]) {
        self.allowedOrigins = allowedOrigins.compactMap(Self.normalizedOrigin)
        allowedHosts = self.allowedOrigins.compactMap { origin in
            guard let scheme = origin.range(of: "://") else { return nil }
            return Self.hostWithoutPort(origin[scheme.upperBound...])
        }
    }

    /// `scheme://host[:port]` lowercased and without a trailing `/`, or nil
    /// when the value is not of that form (a usage error for the flag).
    public static func normalizedOrigin(_ value: String) -> String? {
        var origin = value.lowercased()
        while origin.hasSuffix("/") { origin.removeLast() }
        guard let scheme = origin.range(of: "://"), !origin[..<scheme.lowerBound].isEmpty else { return nil }
        let authority = origin[scheme.upperBound...]
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@"),
              authority.allSatisfy({ !$0.isWhitespace }) else { return nil }
        return origin
    }

    /// A `Host` header passes when it names an IP literal, `localhost`, or
    /// the host of an allowed origin, each with any port. A page on
    /// `evil.example` whose name now resolves to 127.0.0.1 sends
    /// `Host: evil.example` and is refused.
    public func hostAllowed(_ host: String?) -> Bool {
        guard let host, let name = Self.hostWithoutPort(Substring(host.lowercased())) else { return false }
        if name == "localhost" || Self.isIPv4Literal(name) || name.hasPrefix("[") { return true }
        return allowedHosts.contains(name)
    }

    /// An upgrade with no `Origin` is not from a browser and passes; one
    /// with an `Origin` passes when it is the daemon's own page (`http://` +
    /// the request's `Host`, or `https://` + `Host` on a TLS connection —
    /// never the other scheme, which would be another origin) or an
    /// allowed origin.
    public func originAllowed(_ origin: String?, host: String?, overTLS: Bool = false) -> Bool {
        guard let origin else { return true }
        guard let normalized = Self.normalizedOrigin(origin) else { return false }
        if let host, normalized == (overTLS ? "https://" : "http://") + host.lowercased() { return true }
        return allowedOrigins.contains(normalized)
    }

    /// The host of `host[:port]` or `[v6]:port` (brackets kept), nil when
    /// malformed.
    static func hostWithoutPort(_ authority: Substring) -> String? {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || isPort(rest) else { return nil }
            let inside = authority[authority.index(after: authority.startIndex)..<close]
            guard !inside.isEmpty, inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
            return String(authority[...close])
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, !parts[0].isEmpty else { return nil }
        if parts.count == 2 && !isPort(Substring(":" + parts[1])) { return nil }
        return String(parts[0])
    }

    private static func isPort(_ text: Substring) -> Bool {
        guard text.first == ":" else { return false }
        let digits = text.dropFirst()
        return !digits.isEmpty && digits.count <= 5 && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    static func isIPv4Literal(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy { $0.isASCII && $0.isNumber } && Int(part)! <= 255
        }
    }

    /// What a request's `Authorization` header presents.
    public enum PresentedCredential: Equatable, Sendable {
        /// No header, a blank one, or `Bearer` with nothing after it (what
        /// a script sends with its token variable unset).
        case none
        case bearer(String)
        /// Another scheme (`Basic ...`, or a bare token): a presented
        /// credential is always judged, so it is answered 401 naming the
        /// scheme this daemon takes, never served as the anonymous role.
        case otherScheme
    }

    public static func credential(inAuthorization authorization: String?) -> PresentedCredential {
        guard let authorization else { return .none }
        let value = authorization.trimmingBlanks()
        guard !value.isEmpty else { return .none }
        let scheme = value.prefix { $0 != " " && $0 != "\t" }
        guard scheme.lowercased() == "bearer" else { return .otherScheme }
        let token = value.dropFirst(scheme.count).trimmingBlanks()
        return token.isEmpty ? .none : .bearer(String(token))
    }
}
