/// A TCP address as people type it: `HOST:PORT`, or `[IPv6]:PORT` with the
/// brackets that keep the address's own colons apart from the port's. The
/// daemon's `--listen`, the client's `--connect` and `$NAVSYNC_ADDR`, and the
/// backplane's `redis://` URL all read it here and write it back with
/// `description`, so the bracket rule lives in one place.
///
/// Only the shape is checked. Whether the host is an IP literal or a name,
/// and whether port 0 makes sense, is each caller's business.
public struct HostPort: Equatable, Sendable, CustomStringConvertible {
    /// Without brackets: "127.0.0.1", "::1", "localhost".
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Why a text is not a `HOST:PORT`; callers word their own messages.
    public enum Problem: Error, Equatable, Sendable {
        /// Starts with `[` but has no `]:` after the address.
        case badBrackets
        /// No colon at all, so no port.
        case noPort
        /// The host is empty, or the port is not a number from 0 to 65535.
        case badHostOrPort
    }

    /// Reads `HOST:PORT` (split at the last colon) or `[HOST]:PORT`.
    public static func parse<S: StringProtocol>(_ text: S) -> Result<HostPort, Problem> {
        let text = Substring(text)
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return .failure(.badBrackets)
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return .failure(.noPort) }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else {
            return .failure(.badHostOrPort)
        }
        return .success(HostPort(host: String(host), port: port))
    }

    /// "127.0.0.1:7878" or "[::1]:7878": a host with a colon in it gets brackets.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
