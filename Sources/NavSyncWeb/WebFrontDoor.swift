import Glibc
import NavSyncCore

/// What every HTTP connection of the daemon shares: who may come in, the
/// page, the `Date` header of the current second, and the front door's own
/// counts (the daemon makes rows of its table of figures of them: `STATS`
/// and `/metrics`).
/// Must be used on the loop thread only.
public final class WebFrontDoor {
    /// A request head (or the next one on a kept-alive connection) must be
    /// complete this long after the previous response, or after the sniff
    /// decided HTTP; then the connection is closed (408 if a head had
    /// started). Slowloris clients hold a slot for at most this long.
    public static let defaultHeadTimeoutMilliseconds: UInt64 = 10_000
    /// The largest WebSocket message taken in: a few thousand pipelined
    /// commands, or one line of `--max-line`, whichever is more.
    static func maxMessageBytes(maxLineBytes: Int) -> Int { max(64 * 1024, maxLineBytes + 2) }

    let access: WebAccess
    let page: [UInt8]
    let serverHeader = "navsyncd/\(NavSyncVersion.current)"
    let maxMessageBytes: Int
    /// `--max-line`: a change sent as JSON may not make a longer line.
    let maxLineBytes: Int
    /// Turns a room's turn into server-sent events once for all its streams.
    let eventWriter = ServerSentEventWriter()
    /// `defaultHeadTimeoutMilliseconds` in the daemon; shorter in the door's unit tests.
    let headTimeoutMilliseconds: UInt64
    /// Frames every WebSocket's outgoing lines (see `WebSocketTextWriter`).
    let textWriter = WebSocketTextWriter()

    /// HTTP requests answered, refusals included.
    public private(set) var requestsTotal: UInt64 = 0
    /// Open WebSocket connections.
    public private(set) var webSocketsOpen = 0
    /// WebSocket connections opened.
    public private(set) var webSocketsTotal: UInt64 = 0
    private var dateSecond = -1
    private var dateText = ""

    /// An event stream's `: ping` after this much silence.
    let eventPingMilliseconds: UInt64

    public init(access: WebAccess, page: [UInt8], maxLineBytes: Int,
                headTimeoutMilliseconds: UInt64 = WebFrontDoor.defaultHeadTimeoutMilliseconds,
                eventPingMilliseconds: UInt64 = UInt64(ServerSentEvents.pingAfterSeconds) * 1000) {
        self.eventPingMilliseconds = eventPingMilliseconds
        self.access = access
        self.page = page
        self.maxMessageBytes = Self.maxMessageBytes(maxLineBytes: maxLineBytes)
        self.maxLineBytes = maxLineBytes
        self.headTimeoutMilliseconds = headTimeoutMilliseconds
    }

    /// The `Date` header's value, formatted once per second.
    func date() -> String {
        let now = time(nil)
        if now != dateSecond {
            dateSecond = now
            dateText = HTTPDate.format(secondsSince1970: Int64(now))
        }
        return dateText
    }

    func noteRequest() { requestsTotal += 1 }

    func noteWebSocketOpened() {
        webSocketsOpen += 1
        webSocketsTotal += 1
    }

    func noteWebSocketClosed() { webSocketsOpen -= 1 }
}
