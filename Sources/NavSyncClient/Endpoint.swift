import NavSyncCore

/// Where a client connects: a TCP address, the same inside TLS, or a Unix domain socket.
public enum Endpoint: Equatable, Sendable, CustomStringConvertible {
    /// `host` is an IP literal (without brackets) or a name to resolve.
    case tcp(host: String, port: Int)
    /// `tls://HOST:PORT`: TCP, then TLS; the certificate must name `host` as written.
    case tls(host: String, port: Int)
    case unix(path: String)

    /// The address used when neither a flag nor `$NAVSYNC_ADDR` names one.
    public static let defaultAddress = Endpoint.tcp(host: "127.0.0.1", port: 7878)

    /// Why a text names no address; `message` names the flag or variable it came from.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// "127.0.0.1:7878", "[::1]:7878" or "unix:/run/navsync.sock": the form
    /// the status line shows and `$NAVSYNC_ADDR` accepts.
    public var description: String {
        switch self {
        case .tcp(let host, let port):
            return HostPort(host: host, port: port).description
        case .tls(let host, let port):
            return "tls://" + HostPort(host: host, port: port).description
        case .unix(let path):
            return "unix:\(path)"
        }
    }

    /// Reads `HOST:PORT`, `[IPv6]:PORT`, `tls://HOST:PORT` or `unix:PATH` (the
    /// last only where a single string must say both, as in `$NAVSYNC_ADDR`).
    /// `source` names the flag or variable in the error.
    public static func parse(_ text: String, source: String) throws(ParseError) -> Endpoint {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard !path.isEmpty else { throw ParseError("\(source) names an empty socket path") }
            return .unix(path: path)
        }
        let overTLS = text.hasPrefix("tls://")
        let rest = overTLS ? String(text.dropFirst(6)) : text
        // Port 0 is a fine thing to listen on but nothing to connect to.
        guard case .success(let address) = HostPort.parse(rest), address.port > 0 else {
            throw ParseError("\(source) wants HOST:PORT or tls://HOST:PORT with a port from 1 to 65535, not '\(text)'")
        }
        return overTLS ? .tls(host: address.host, port: address.port) : .tcp(host: address.host, port: address.port)
    }

    /// Reads a comma-separated list of addresses in any of `parse`'s forms
    /// (`127.0.0.1:7878,127.0.0.1:7879`, `unix:/run/a.sock`), tried in turn.
    public static func parseList(_ text: String, source: String) throws(ParseError) -> [Endpoint] {
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { String($0.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed()) }
        guard !items.contains(where: \.isEmpty) else {
            throw ParseError("\(source) holds an empty address in '\(text)'")
        }
        var endpoints: [Endpoint] = []
        for item in items { endpoints.append(try parse(item, source: source)) }
        return endpoints
    }
}
