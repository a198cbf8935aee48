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
        var host: Substring
        var portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            guard after.hasPrefix(":") else { return nil }
            portText = after.dropFirst()
        } else {
            guard let colon = rest.lastIndex(of: ":") else { return nil }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" || $0 == "@" }),
              portText.allSatisfy(\.isASCII), let port = Int(portText), (1...65535).contains(port) else { return nil }
        self = .tcp(host: String(host), port: port, database: database)
    }

    public var database: Int {
        switch self {
        case .tcp(_, _, let db), .unix(_, let db): return db
        }
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port, let db):
            let shown = host.contains(":") ? "[\(host)]" : host
            return "redis://\(shown):\(port)" + (db == 0 ? "" : "/\(db)")
        case .unix(let path, _):
            return "unix:\(path)"
        }
    }
}
