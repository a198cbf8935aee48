import Foundation

/// What goes over the wire in the door's tests, written and read the way a
/// client would.
enum HTTPWire {
    struct Response {
        var status: Int
        /// Lowercased names.
        var headers: [String: String]
        var body: [UInt8]
        var bodyText: String { String(decoding: body, as: UTF8.self) }
    }

    static func get(_ path: String, _ extra: String = "") -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:7878\r\n\(extra)\r\n"
    }

    /// The responses in `bytes`, in order (bodies by `Content-Length`; a
    /// 101 has none); bytes after the last whole one are ignored.
    static func responses(_ bytes: [UInt8]) -> [Response] {
        var found: [Response] = []
        var at = 0
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while at < bytes.count {
            guard let headEnd = (at...max(at, bytes.count - 4)).first(where: { Array(bytes[$0..<min($0 + 4, bytes.count)]) == end })
            else { break }
            let lines = String(decoding: bytes[at..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
            let statusWords = lines[0].split(separator: " ")
            guard statusWords.count >= 2, let status = Int(statusWords[1]) else { break }
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let length = status == 101 ? 0 : Int(headers["content-length"] ?? "0") ?? 0
            let bodyStart = headEnd + 4
            guard bodyStart + length <= bytes.count else { break }
            found.append(Response(status: status, headers: headers, body: Array(bytes[bodyStart..<bodyStart + length])))
            at = bodyStart + length
        }
        return found
    }
}
