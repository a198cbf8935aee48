import NavSyncCore

/// What a `GET /rooms/NAME/events` request asks for, read from its
/// query and `Last-Event-ID`: where to resume, the token (`?token=`, since
/// `EventSource` cannot send headers) and the member name.
public struct EventStreamRequest: Equatable, Sendable {
    /// Resume after this revision, as `WATCH <rev>` does; nil for a fresh stream.
    public var resumeAfter: UInt64?
    /// `?token=`, percent-decoded; only this path reads it.
    public var token: String?
    /// `?name=`: the name the stream's member shows.
    public var memberName: String?

    public init(resumeAfter: UInt64? = nil, token: String? = nil, memberName: String? = nil) {
        self.resumeAfter = resumeAfter
        self.token = token
        self.memberName = memberName
    }

    /// A request this path answers `400`.
    public struct Refusal: Error, Equatable, Sendable {
        public var message: String
    }

    /// `Last-Event-ID` wins over `?since=` (`EventSource` keeps the first
    /// URL, `since` and all, when it reconnects); one that is not a
    /// revision is ignored, while a `?since=` that is not one is refused.
    public static func read(query: Substring?, lastEventID: String?) -> Result<EventStreamRequest, Refusal> {
        var request = EventStreamRequest()
        var since: UInt64?
        for (key, value) in pairs(query ?? "") {
            switch key {
            case "since":
                guard since == nil else { continue }
                guard let revision = decimal(value) else {
                    return .failure(Refusal(message: "?since= must be a revision, a whole number below 2^64"))
                }
                since = revision
            case "token":
                guard request.token == nil, case .success(let token) = Route.percentDecode(plusAsSpace(value)) else { continue }
                request.token = token.isEmpty ? nil : token
            case "name":
                guard request.memberName == nil else { continue }
                guard case .success(let name) = Route.percentDecode(plusAsSpace(value)),
                      Names.isValidMemberName(name) else {
                    return .failure(Refusal(message: "?name=: \(Names.memberNameRule)"))
                }
                request.memberName = name
            default:
                continue
            }
        }
        request.resumeAfter = lastEventID.flatMap { decimal(Substring($0).trimmingBlanks()) } ?? since
        return .success(request)
    }

    /// The first `?token=` of a query, percent-decoded, whatever else the
    /// query holds: the credential is judged before the rest of the request.
    public static func token(inQuery query: Substring?) -> String? {
        guard let value = pairs(query ?? "").first(where: { $0.key == "token" })?.value,
              case .success(let token) = Route.percentDecode(plusAsSpace(value)), !token.isEmpty else { return nil }
        return token
    }

    /// `key=value` pairs split at `&`, as sent (not decoded).
    static func pairs(_ query: Substring) -> [(key: Substring, value: Substring)] {
        query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }

    /// Digits only, below 2^64.
    static func decimal(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return UInt64(text)
    }

    /// A form-encoded query writes a space as `+`.
    private static func plusAsSpace(_ value: Substring) -> ArraySlice<UInt8> {
        ArraySlice(value.utf8.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 })
    }
}
