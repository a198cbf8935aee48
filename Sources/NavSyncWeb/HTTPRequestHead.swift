/// One parsed HTTP/1.x request line and header section. Only what the
/// daemon's GET/HEAD endpoints need is interpreted; every header is kept.
public struct HTTPRequestHead: Equatable, Sendable {
    public var method: String
    /// As sent: path plus an optional `?query`.
    public var target: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// Names lowercased, values with surrounding blanks removed, in order.
    public var headers: [(name: String, value: String)]
    /// From `Content-Length`; 0 when absent.
    public var contentLength: Int
    /// A `Transfer-Encoding` header was present (its body cannot be skipped).
    public var hasTransferEncoding: Bool

    public init(method: String, target: String, minorVersion: Int, headers: [(name: String, value: String)],
                contentLength: Int = 0, hasTransferEncoding: Bool = false) {
        self.method = method
        self.target = target
        self.minorVersion = minorVersion
        self.headers = headers
        self.contentLength = contentLength
        self.hasTransferEncoding = hasTransferEncoding
    }

    public static func == (a: HTTPRequestHead, b: HTTPRequestHead) -> Bool {
        a.method == b.method && a.target == b.target && a.minorVersion == b.minorVersion
            && a.headers.elementsEqual(b.headers, by: { $0.name == $1.name && $0.value == $1.value })
            && a.contentLength == b.contentLength && a.hasTransferEncoding == b.hasTransferEncoding
    }

    /// The first value of a header, by lowercase name.
    public func header(_ lowercaseName: String) -> String? {
        headers.first(where: { $0.name == lowercaseName })?.value
    }

    public func headerCount(_ lowercaseName: String) -> Int {
        headers.reduce(0) { $0 + ($1.name == lowercaseName ? 1 : 0) }
    }

    /// The comma-separated tokens of every instance of a header, lowercased.
    public func tokens(_ lowercaseName: String) -> [String] {
        headers.filter { $0.name == lowercaseName }.flatMap { header in
            header.value.split(separator: ",").map { $0.trimmingBlanks().lowercased() }
        }
    }

    public var path: Substring {
        target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
    }

    /// What follows the first `?` of the target, nil when there is none.
    public var query: Substring? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        return target[target.index(after: mark)...]
    }

    /// `Content-Type` without its parameters, lowercased; nil when absent.
    public var mediaType: String? {
        header("content-type").map { $0.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
            .trimmingBlanks().lowercased() }
    }

    /// HTTP/1.1 keeps the connection unless told `close`; HTTP/1.0 closes
    /// unless told `keep-alive`.
    public var wantsKeepAlive: Bool {
        let options = tokens("connection")
        if options.contains("close") { return false }
        return minorVersion == 1 || options.contains("keep-alive")
    }

    /// `Upgrade: websocket` with `Connection: upgrade`.
    public var asksForWebSocket: Bool {
        tokens("upgrade").contains("websocket") && tokens("connection").contains("upgrade")
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    func trimmingBlanks() -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !blank($0) }) else { return Substring() }
        let last = lastIndex(where: { !blank($0) })!
        return Substring(self[first...last])
    }
}
