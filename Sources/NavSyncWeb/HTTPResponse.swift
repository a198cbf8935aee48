/// One HTTP/1.1 response, written out with the headers every answer of this
/// daemon carries: `Date`, `Server`, `Content-Length`, and `Connection:
/// close` when the connection ends after it.
public struct HTTPResponse: Equatable, Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    public var extraHeaders: [(name: String, value: String)]
    public var closesConnection: Bool
    /// `no-store` everywhere but on `/rooms/NAME`, which may be revalidated by its `ETag`.
    public var cacheControl = "no-store"

    public init(status: Int, contentType: String = "text/plain; charset=utf-8", body: [UInt8],
                extraHeaders: [(name: String, value: String)] = [], closesConnection: Bool = false) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.extraHeaders = extraHeaders
        self.closesConnection = closesConnection
    }

    public static func == (a: HTTPResponse, b: HTTPResponse) -> Bool {
        a.status == b.status && a.contentType == b.contentType && a.body == b.body
            && a.closesConnection == b.closesConnection && a.cacheControl == b.cacheControl
            && a.extraHeaders.elementsEqual(b.extraHeaders, by: { $0.name == $1.name && $0.value == $1.value })
    }

    /// A plain-text refusal; 405 gets its `Allow`, 401 its challenge.
    public static func refusal(_ status: Int, _ reason: String, closes: Bool,
                               allow: String = WebEndpoint.allowHeader) -> HTTPResponse {
        var headers: [(name: String, value: String)] = []
        if status == 405 { headers.append(("Allow", allow)) }
        if status == 401 { headers.append(("WWW-Authenticate", "Bearer realm=\"navsync\"")) }
        return HTTPResponse(status: status, body: Array("\(reason)\n".utf8), extraHeaders: headers,
                            closesConnection: closes)
    }

    /// A refusal on the HTTP API's paths: the same status and headers,
    /// with the JSON body `{"error":"<code>","message":"…"}`.
    public static func apiRefusal(_ status: Int, code: String, _ message: String, closes: Bool,
                                  allow: String = WebEndpoint.allowHeader) -> HTTPResponse {
        var response = refusal(status, message, closes: closes, allow: allow)
        response.contentType = "application/json"
        response.body = Array(JSONText.error(code: code, message: message).utf8)
        return response
    }

    /// A plain refusal said as the HTTP API says it: its reason becomes
    /// the message, under the code that names the status.
    public func asAPIRefusal() -> HTTPResponse {
        var response = self
        var message = String(decoding: body, as: UTF8.self)
        while message.hasSuffix("\n") { message.removeLast() }
        response.contentType = "application/json"
        response.body = Array(JSONText.error(code: Self.apiErrorCode(status, message: message), message: message).utf8)
        return response
    }

    /// The `error` code of an HTTP API refusal that is not the line protocol's.
    public static func apiErrorCode(_ status: Int, message: String = "") -> String {
        switch status {
        case 400: return "bad-args"
        case 401: return message.contains("needed") ? "auth-required" : "auth-failed"
        case 403: return "forbidden"
        case 404: return "not-found"
        case 405: return "method-not-allowed"
        case 408: return "timeout"
        case 411: return "length-required"
        case 413: return "limit"
        case 415: return "unsupported-media-type"
        case 503: return "unavailable"
        default: return "bad-request"
        }
    }

    /// The head of a server-sent event stream: no length, as the body runs
    /// until the connection closes. `allowOrigin`: the request's `Origin`,
    /// already judged the daemon's own or an allowed one, which a browser
    /// must see echoed before a page of that origin may read the stream
    /// (a GET `EventSource` sends without a preflight; none is ever answered).
    public static func eventStreamHead(date: String, server: String, allowOrigin: String? = nil) -> [UInt8] {
        let cors = allowOrigin.map { "Access-Control-Allow-Origin: \($0)\r\nVary: Origin\r\n" } ?? ""
        return Array(("HTTP/1.1 200 OK\r\nDate: \(date)\r\nServer: \(server)\r\n"
            + "Content-Type: text/event-stream\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
            + cors + "Connection: close\r\n\r\n").utf8)
    }

    /// `Expect: 100-continue` answered once the checks before the body passed.
    public static let continueHead: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// A Bearer from a throttled address: 401, and when to try again.
    public static func throttled(retryAfterSeconds seconds: Int, closes: Bool) -> HTTPResponse {
        var response = refusal(401, "throttled, retry in \(seconds) s", closes: closes)
        response.extraHeaders.append(("Retry-After", String(seconds)))
        return response
    }

    /// A token that verified but does not hold now (`token expired`):
    /// 401 whose challenge says the token is the problem (RFC 6750).
    public static func invalidToken(_ reason: String, closes: Bool) -> HTTPResponse {
        HTTPResponse(status: 401, body: Array("\(reason)\n".utf8),
                     extraHeaders: [("WWW-Authenticate", "Bearer realm=\"navsync\", error=\"invalid_token\"")],
                     closesConnection: closes)
    }

    /// The bytes to send; for a HEAD request the headers only (with the
    /// length the body would have).
    public func encoded(date: String, server: String, headOnly: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        head += "Date: \(date)\r\nServer: \(server)\r\n"
        // A 304 has no body, so neither its type nor a length is said.
        if status != 304 { head += "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n" }
        head += "Cache-Control: \(cacheControl)\r\nX-Content-Type-Options: nosniff\r\n"
        for header in extraHeaders { head += "\(header.name): \(header.value)\r\n" }
        if closesConnection { head += "Connection: close\r\n" }
        head += "\r\n"
        var bytes = Array(head.utf8)
        if !headOnly && status != 304 { bytes += body }
        return bytes
    }

    /// The `101 Switching Protocols` answer to a WebSocket upgrade; a 1xx
    /// response carries no `Content-Length`.
    public static func switchingProtocols(acceptKey: String, date: String, server: String) -> [UInt8] {
        Array(("HTTP/1.1 101 Switching Protocols\r\nDate: \(date)\r\nServer: \(server)\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(acceptKey)\r\n\r\n").utf8)
    }

    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 101: return "Switching Protocols"
        case 100: return "Continue"
        case 200: return "OK"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 415: return "Unsupported Media Type"
        case 422: return "Unprocessable Content"
        case 431: return "Request Header Fields Too Large"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }
}

/// The `Date` header's format (RFC 9110 IMF-fixdate), from a Unix time,
/// without Foundation's formatters.
public enum HTTPDate {
    public static func format(secondsSince1970 seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][Int(((days % 7) + 7) % 7)]
        // Civil date from a day count (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekday), \(two(Int(day))) \(months[Int(month) - 1]) \(year) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }
}
