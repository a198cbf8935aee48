import NavSyncCore

/// Where Redis listens: `redis://HOST:PORT[/DB]` or `unix:PATH`.
public enum RedisEndpoint: Equatable, Sendable, CustomStringConvertible {
    case tcp(host: String, port: Int, database: Int)
    case unix(path: String, database: Int)

    /// Reads the `--backplane` value; nil when it is not one of the two forms.
    public init?(url: String) {
        if url.hasPrefix("unix:") {
            let path = String(url.dropFirst(5))
            guard path.hasPrefix("/") || path.hasPrefix(".") else { return nil }
            self = .unix(path: path, database: 0)
            return
        }
        guard url.hasPrefix("redis://") else { return nil }
        var rest = Substring(url.dropFirst(8))
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let dbText = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            if !dbText.isEmpty {
                guard dbText.allSatisfy(\.isASCII), let db = Int(dbText), db >= 0, db < 1 << 16 else { return nil }
                database = db
            }
        }
        // Redis has no port 0, and a host never holds what a URL would read as a path or user.
        guard case .success(let address) = HostPort.parse(rest), address.port > 0,
              !address.host.contains(where: { $0 == " " || $0 == "/" || $0 == "@" }) else { return nil }
        self = .tcp(host: address.host, port: address.port, database: database)
    }

    public var database: Int {
        switch self {
        case .tcp(_, _, let db), .unix(_, let db): return db
        }
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port, let db):
            return "redis://\(HostPort(host: host, port: port))" + (db == 0 ? "" : "/\(db)")
        case .unix(let path, _):
            return "unix:\(path)"
        }
    }
}
