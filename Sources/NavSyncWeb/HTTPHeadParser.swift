/// Why a request head was refused, with the status it is answered with.
/// After any of these the connection is closed.
public struct HTTPHeadError: Error, Equatable, Sendable {
    /// 400, 414 or 431.
    public var status: Int
    /// For logs and the response body.
    public var reason: String

    public init(_ status: Int, _ reason: String) {
        self.status = status
        self.reason = reason
    }
}

/// Splits a byte stream into HTTP/1.x request heads, bounded and strict.
///
/// Strict because a lenient parser is how request smuggling starts: a bare
/// CR, a NUL or other control byte, obsolete line folding, a blank before a
/// header's colon, a duplicate or non-numeric `Content-Length`, both
/// `Content-Length` and `Transfer-Encoding` (but on a `POST`, which the
/// HTTP API answers `411` and closes), or a missing or repeated `Host`
/// on HTTP/1.1 all make the request malformed (400).
///
/// Bounded: the request line may take `maxRequestLineBytes` (else 414), the
/// header lines after it `maxHeaderBytes` and `maxHeaderCount` (else 431).
/// Lines end in CRLF or LF. Each line is looked at once, so a head that
/// arrives a byte at a time costs no rescanning.
///
/// Bytes after a head (a body, the next request, WebSocket frames) stay
/// buffered: `skip(upTo:)` drops a body, `takeBuffered()` hands them over.
public struct HTTPHeadParser: Sendable {
    public static let maxRequestLineBytes = ProtocolSniffer.maxRequestLineBytes
    public static let maxHeaderBytes = 8 * 1024
    public static let maxHeaderCount = 100

    private var buffer: [UInt8] = []
    /// Start of the line being read.
    private var lineStart = 0
    /// Bytes in `lineStart..<scanned` hold no `\n`.
    private var scanned = 0
    /// The head being assembled; nil until its request line is read.
    private var partial: HTTPRequestHead?
    private var headerBytes = 0
    private var failure: HTTPHeadError?

    public init() {}

    public var bufferedByteCount: Int { buffer.count - lineStart }

    /// True once a request has begun and is not yet whole: bytes of a line,
    /// or a request line and headers still waiting for the blank line.
    public var holdsPartialHead: Bool { partial != nil || bufferedByteCount > 0 }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        if lineStart > 0 {
            buffer.removeSubrange(0..<lineStart)
            scanned -= lineStart
            lineStart = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete head, a failure (then always the same one), or nil
    /// when more bytes are needed.
    public mutating func next() -> Result<HTTPRequestHead, HTTPHeadError>? {
        if let failure { return .failure(failure) }
        while true {
            guard let newline = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) else {
                scanned = buffer.count
                let pending = buffer.count - lineStart
                if partial == nil && pending >= Self.maxRequestLineBytes {
                    return fail(414, "request line longer than \(Self.maxRequestLineBytes) bytes")
                }
                if partial != nil && headerBytes + pending > Self.maxHeaderBytes {
                    return fail(431, "request headers larger than \(Self.maxHeaderBytes) bytes")
                }
                return nil
            }
            var line = buffer[lineStart..<newline]
            let lineBytes = newline + 1 - lineStart
            lineStart = newline + 1
            scanned = lineStart
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if let bad = line.firstIndex(where: { $0 == 0 || $0 == UInt8(ascii: "\r") }) {
                return fail(400, line[bad] == 0 ? "NUL byte in the request head" : "bare CR in the request head")
            }
            guard var head = partial else {
                if lineBytes > Self.maxRequestLineBytes {
                    return fail(414, "request line longer than \(Self.maxRequestLineBytes) bytes")
                }
                // Blank lines before a request (left over after a body) are skipped.
                if line.isEmpty { continue }
                switch Self.requestLine(line) {
                case .success(let head):
                    partial = head
                    headerBytes = 0
                case .failure(let error):
                    return fail(error.status, error.reason)
                }
                continue
            }
            headerBytes += lineBytes
            if headerBytes > Self.maxHeaderBytes {
                return fail(431, "request headers larger than \(Self.maxHeaderBytes) bytes")
            }
            if line.isEmpty {
                partial = nil
                switch Self.finished(head) {
                case .success(let head): return .success(head)
                case .failure(let error): return fail(error.status, error.reason)
                }
            }
            if head.headers.count == Self.maxHeaderCount {
                return fail(431, "more than \(Self.maxHeaderCount) request headers")
            }
            switch Self.headerLine(line) {
            case .success(let header):
                head.headers.append(header)
                partial = head
            case .failure(let error):
                return fail(error.status, error.reason)
            }
        }
    }

    /// Drops up to `count` buffered bytes after the last head (a body the
    /// daemon does not read); returns how many it dropped.
    /// Up to `count` bytes after the last head, taken out (a body being read).
    public mutating func take(upTo count: Int) -> ArraySlice<UInt8> {
        let taken = min(count, buffer.count - lineStart)
        let bytes = buffer[lineStart..<lineStart + taken]
        lineStart += taken
        scanned = max(scanned, lineStart)
        return bytes
    }

    public mutating func skip(upTo count: Int) -> Int {
        let dropped = min(count, buffer.count - lineStart)
        lineStart += dropped
        scanned = max(scanned, lineStart)
        return dropped
    }

    /// Every byte after the last head, handed over once.
    public mutating func takeBuffered() -> [UInt8] {
        defer {
            buffer = []
            lineStart = 0
            scanned = 0
        }
        return Array(buffer[lineStart...])
    }

    private mutating func fail(_ status: Int, _ reason: String) -> Result<HTTPRequestHead, HTTPHeadError> {
        let error = HTTPHeadError(status, reason)
        failure = error
        buffer = []
        lineStart = 0
        scanned = 0
        return .failure(error)
    }

    // MARK: - Lines

    /// `METHOD SP /target SP HTTP/1.x`, single spaces, visible ASCII target.
    static func requestLine(_ line: ArraySlice<UInt8>) -> Result<HTTPRequestHead, HTTPHeadError> {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failure(HTTPHeadError(400, "malformed request line")) }
        let (method, target, version) = (parts[0], parts[1], parts[2])
        guard !method.isEmpty, method.allSatisfy(ProtocolSniffer.isCapital) else {
            return .failure(HTTPHeadError(400, "malformed method"))
        }
        guard target.first == UInt8(ascii: "/"), target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(HTTPHeadError(400, "malformed request target"))
        }
        let minor: Int
        if version.elementsEqual("HTTP/1.1".utf8) {
            minor = 1
        } else if version.elementsEqual("HTTP/1.0".utf8) {
            minor = 0
        } else {
            return .failure(HTTPHeadError(400, "unsupported HTTP version"))
        }
        return .success(HTTPRequestHead(method: String(decoding: method, as: UTF8.self),
                                        target: String(decoding: target, as: UTF8.self),
                                        minorVersion: minor, headers: []))
    }

    /// `name: value` with a token name, no blank before the colon, no
    /// control bytes in the value (tabs allowed), no folding.
    static func headerLine(_ line: ArraySlice<UInt8>) -> Result<(name: String, value: String), HTTPHeadError> {
        if line.first == UInt8(ascii: " ") || line.first == UInt8(ascii: "\t") {
            return .failure(HTTPHeadError(400, "obsolete line folding"))
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
            return .failure(HTTPHeadError(400, "malformed header line"))
        }
        let name = line[..<colon]
        guard name.allSatisfy(isTokenByte) else {
            return .failure(HTTPHeadError(400, "malformed header name"))
        }
        let value = line[(colon + 1)...]
        guard value.allSatisfy({ $0 == UInt8(ascii: "\t") || ($0 >= 0x20 && $0 != 0x7F) }) else {
            return .failure(HTTPHeadError(400, "control byte in a header value"))
        }
        return .success((String(decoding: name, as: UTF8.self).lowercased(),
                         String(String(decoding: value, as: UTF8.self).trimmingBlanks())))
    }

    /// Checks that need the whole header section.
    static func finished(_ head: HTTPRequestHead) -> Result<HTTPRequestHead, HTTPHeadError> {
        var head = head
        let lengths = head.headers.filter { $0.name == "content-length" }
        if lengths.count > 1 {
            return .failure(HTTPHeadError(400, "more than one Content-Length"))
        }
        if let length = lengths.first {
            guard !length.value.isEmpty, length.value.utf8.count <= 15,
                  length.value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let value = Int(length.value) else {
                return .failure(HTTPHeadError(400, "malformed Content-Length"))
            }
            head.contentLength = value
        }
        head.hasTransferEncoding = head.headerCount("transfer-encoding") > 0
        // A POST with both is the HTTP API's to refuse (411, closed, its body unread).
        if head.hasTransferEncoding && !lengths.isEmpty && head.method != "POST" {
            return .failure(HTTPHeadError(400, "both Content-Length and Transfer-Encoding"))
        }
        let hosts = head.headerCount("host")
        if hosts > 1 || (head.minorVersion == 1 && hosts == 0) {
            return .failure(HTTPHeadError(400, hosts == 0 ? "HTTP/1.1 request without Host" : "more than one Host"))
        }
        return .success(head)
    }

    /// RFC 9110 token characters.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
