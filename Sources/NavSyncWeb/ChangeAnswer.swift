import NavSyncCore

/// How the hub's answer to a change (the line a line-protocol client
/// would read: `OK <rev>` or `ERR <code> <text>`) is said over HTTP, after
/// HTTP-API.md's table: `200` with the room document, `412` for a guard
/// that did not match, `503` when nothing could be changed or made
/// durable, `422` for every other refusal of the change itself.
public struct ChangeAnswer: Equatable, Sendable {
    public var status: Int
    /// The revision for the `ETag` header: the change's on `200`, the
    /// room's current one on `412`; nil when it is not known.
    public var revision: UInt64?
    /// The JSON error body; nil on `200`, whose body is the room document.
    public var errorBody: String?

    public init(status: Int, revision: UInt64?, errorBody: String?) {
        self.status = status
        self.revision = revision
        self.errorBody = errorBody
    }

    /// The answer to a reply line; nil for a line that answers no change.
    public static func forReply(_ line: ServerLine) -> ChangeAnswer? {
        switch line {
        case .ok(let revision):
            return ChangeAnswer(status: 200, revision: revision, errorBody: nil)
        case .error(let error):
            return forRefusal(code: error.code, message: error.message)
        default:
            return nil
        }
    }

    /// The answer to `ERR <code> <message>`.
    public static func forRefusal(code: String, message: String) -> ChangeAnswer {
        switch ErrorCode(rawValue: code) {
        case .conflict?:
            // The line protocol writes `current=REV`.
            let current = message.hasPrefix("current=") ? UInt64(message.dropFirst("current=".count)) : nil
            return ChangeAnswer(status: 412, revision: current,
                                errorBody: "{\"error\":\"conflict\",\"current\":\(current.map(String.init) ?? "null")}")
        case .unavailable?, .internal?:
            return ChangeAnswer(status: 503, revision: nil, errorBody: JSONText.error(code: code, message: message))
        case .forbidden?:
            return ChangeAnswer(status: 403, revision: nil, errorBody: JSONText.error(code: code, message: message))
        case .authRequired?, .authFailed?:
            return ChangeAnswer(status: 401, revision: nil, errorBody: JSONText.error(code: code, message: message))
        default:
            return ChangeAnswer(status: 422, revision: nil, errorBody: JSONText.error(code: code, message: message))
        }
    }
}
