/// Splits a keep-alive HTTP/1.1 response stream, arriving in arbitrary
/// chunks, into whole responses and reports each one's status code once its
/// body (by `Content-Length`) has fully arrived, so the HTTP writers never
/// count a response that is only partly read. The bench's daemon answers
/// every request with a `Content-Length`; a response without one, or a head
/// that is malformed or longer than `maxHeadBytes`, is an error (the stream
/// can no longer be split reliably).
struct HTTPResponseReader {
    struct Malformed: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    static let maxHeadBytes = 8192

    /// The head of the response being read, up to and including its blank line.
    private var head: [UInt8] = []
    private var status = 0
    /// Body bytes still to skip before the current response is complete; nil while reading a head.
    private var bodyLeft: Int?

    /// Feeds `bytes`; calls `onResponse` with the status of each response
    /// completed by them, in order.
    mutating func read(_ bytes: UnsafeRawBufferPointer, _ onResponse: (Int) -> Void) throws(Malformed) {
        var index = 0
        while index < bytes.count {
            if let left = bodyLeft {
                let take = min(left, bytes.count - index)
                index += take
                bodyLeft = left - take
            } else {
                let byte = bytes[index]
                index += 1
                head.append(byte)
                if head.count > Self.maxHeadBytes {
                    throw Malformed(description: "response head longer than \(Self.maxHeadBytes) bytes")
                }
                guard byte == UInt8(ascii: "\n"), head.count >= 4, head[head.count - 2] == UInt8(ascii: "\r"),
                      head[head.count - 3] == UInt8(ascii: "\n"), head[head.count - 4] == UInt8(ascii: "\r")
                else { continue }
                let (code, length) = try Self.parseHead(head)
                head.removeAll(keepingCapacity: true)
                status = code
                bodyLeft = length
            }
            if bodyLeft == 0 {
                bodyLeft = nil
                onResponse(status)
            }
        }
    }

    /// The status code and Content-Length of a head ending in CRLF CRLF.
    static func parseHead(_ head: [UInt8]) throws(Malformed) -> (status: Int, contentLength: Int) {
        guard let text = String(validating: head, as: UTF8.self) else {
            throw Malformed(description: "response head is not UTF-8")
        }
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: true)
        guard !lines.isEmpty else { throw Malformed(description: "empty response head") }
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0", parts[1].count == 3,
              let code = Int(parts[1]), (100...599).contains(code)
        else { throw Malformed(description: "bad status line '\(statusLine)'") }
        var contentLength: Int?
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw Malformed(description: "bad header line '\(line)'") }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces
            if name == "transfer-encoding" { throw Malformed(description: "Transfer-Encoding in a response is not read here") }
            guard name == "content-length" else { continue }
            guard !value.isEmpty, value.utf8.allSatisfy({ (48...57).contains($0) }), let length = Int(value),
                  contentLength == nil || contentLength == length
            else { throw Malformed(description: "bad Content-Length '\(value)'") }
            contentLength = length
        }
        guard let contentLength else { throw Malformed(description: "status \(code) has no Content-Length") }
        return (code, contentLength)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
