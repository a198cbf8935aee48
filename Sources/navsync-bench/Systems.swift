/// The systems the bench can drive, and the few bytes each one needs:
/// how a watcher subscribes, how the actor makes a change, and how a line
/// a client receives is told apart. Parsing is deliberately minimal and the
/// same for every system: lines are found with `memchr`, and only the first
/// two bytes of each line are looked at.
enum System: String, CaseIterable, Codable {
    /// navsyncd: `WATCH` / `SELECT`, events `EVENT <rev> select /<screen>`.
    case navsync
    /// navsyncd with its watchers on WebSocket (`/ws`, one text message per
    /// line); the actor stays on TCP, so the rows compare the fan-out.
    case navsyncWebSocket = "navsync-ws"
    /// navsyncd with its watchers on server-sent events (`GET
    /// /rooms/main/events`, one `change` event per change); the actor
    /// stays on TCP, so the rows compare the fan-out.
    case navsyncSSE = "navsync-sse"
    /// navsyncd with its watchers inside TLS (`--tls-port`, the bench's own
    /// TLS client, as a remote watcher would be); the actor stays on TCP.
    case navsyncTLS = "navsync-tls"
    /// navsyncd with its watchers on WebSocket inside TLS (`wss://`): the
    /// upgrade and frames of navsync-ws through the TLS client of
    /// navsync-tls, to the same `--tls-port`; the actor stays on TCP.
    case navsyncWSS = "navsync-wss"
    /// redis-server: `SUBSCRIBE` / `SET` + `PUBLISH` (RESP), messages as RESP arrays.
    case redis
    /// redis-server with its subscribers on its TLS port (Redis 6+), the actor on TCP:
    /// the peer navsync-tls is measured against.
    case redisTLS = "redis-tls"
    /// nats-server: `SUB` / `PUB`, messages `MSG <subject> <sid> <len>` + payload.
    case nats
    /// The bench's own minimal broadcaster: navsync's protocol, one write per watcher per event.
    case floor

    /// The watchers connect to `--tls-port` inside TLS.
    var watchersOverTLS: Bool { self == .navsyncTLS || self == .navsyncWSS || self == .redisTLS }

    /// The watchers upgrade to WebSocket and then read frames, not lines.
    var watchersOnWebSocket: Bool { self == .navsyncWebSocket || self == .navsyncWSS }
}

/// What one received line means to the bench.
enum LineKind {
    /// One event (one change) has arrived.
    case event
    /// The subscription is in place.
    case subscribed
    /// For the actor: one change was acknowledged.
    case changeAcknowledged
    /// The server asks for a PONG (NATS).
    case ping
    /// An error line, or a navsync resync (STATE after subscribing): counted and reported.
    case error
    /// Framing or bookkeeping lines with no meaning for the count.
    case ignore
}

struct Wire {
    let system: System
    /// navsync over TCP: the token each watcher sends with `AUTH`
    /// before `WATCH` (a view grant), and the actor's (a control grant).
    var watcherToken: String? = nil
    var actorToken: String? = nil
    /// The channel / subject / room every watcher follows.
    static let channel = "navbench"
    static let screens = ["green", "red"]

    /// Sent once by each watcher right after connecting.
    var subscribe: [UInt8] {
        switch system {
        case .navsync, .navsyncTLS, .floor:
            Array(((watcherToken.map { "AUTH \($0)\n" } ?? "") + "WATCH\n").utf8)
        case .navsyncWebSocket, .navsyncWSS:
            Self.upgradeRequest + Self.maskedText("WATCH")
        case .navsyncSSE:
            Self.eventsRequest
        case .redis, .redisTLS:
            resp(["SUBSCRIBE", Self.channel])
        case .nats:
            Array("CONNECT {\"verbose\":false,\"pedantic\":false}\r\nSUB \(Self.channel) 1\r\nPING\r\n".utf8)
        }
    }

    /// Sent once by the actor right after connecting (nothing for most systems).
    var actorHello: [UInt8] {
        switch system {
        case .nats: Array("CONNECT {\"verbose\":false,\"pedantic\":false}\r\n".utf8)
        case .navsync: Array((actorToken.map { "AUTH \($0)\n" } ?? "").utf8)
        default: []
        }
    }

    /// The bytes for change number `sequence` (1-based) that makes `screen` the presented one.
    /// For navsync this is a real state change; for Redis a key SET plus a PUBLISH whose payload
    /// is the event line navsync would send; for NATS a PUB of that payload (no state kept).
    func change(sequence: Int, screen: String) -> [UInt8] {
        switch system {
        case .navsync, .navsyncWebSocket, .navsyncSSE, .navsyncTLS, .navsyncWSS, .floor:
            return Array("SELECT \(screen)\n".utf8)
        case .redis, .redisTLS:
            return resp(["SET", "\(Self.channel):route", "/\(screen)"])
                + resp(["PUBLISH", Self.channel, payload(sequence, screen)])
        case .nats:
            let body = payload(sequence, screen)
            return Array("PUB \(Self.channel) \(body.utf8.count)\r\n\(body)\r\n".utf8)
        }
    }

    /// Acknowledgement lines the actor receives per change (0: the system sends none).
    var acknowledgementsPerChange: Int {
        switch system {
        case .navsync, .navsyncWebSocket, .navsyncSSE, .navsyncTLS, .navsyncWSS, .floor, .redis, .redisTLS: 1
        case .nats: 0
        }
    }

    /// Same text as a navsync event line, so that every system carries the same information.
    private func payload(_ sequence: Int, _ screen: String) -> String {
        "EVENT \(sequence) select /\(screen)"
    }

    /// A fixed key is fine: the bench checks nothing of the handshake but its end.
    static let upgradeRequest = Array(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)

    /// The events of the room the actor changes (`main`, where connections start).
    static let eventsRequest = Array("GET /rooms/main/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)

    /// A short client text frame, masked as RFC 6455 requires.
    static func maskedText(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        let mask: [UInt8] = [0x6E, 0x61, 0x76, 0x73]
        return [0x81, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    private func resp(_ parts: [String]) -> [UInt8] {
        var text = "*\(parts.count)\r\n"
        for part in parts { text += "$\(part.utf8.count)\r\n\(part)\r\n" }
        return Array(text.utf8)
    }

    /// Classifies a line a watcher received from its first two bytes
    /// (0 where the line is shorter).
    func watcherLine(_ b0: UInt8, _ b1: UInt8) -> LineKind {
        switch system {
        case .navsync, .navsyncWebSocket, .navsyncTLS, .navsyncWSS, .floor:
            // EVENT ... / STATE ... (first one: the WATCH reply; later ones: a resync) / ERR ...
            if b0 == UInt8(ascii: "E") { return b1 == UInt8(ascii: "V") ? .event : .error }
            if b0 == UInt8(ascii: "S") { return .subscribed }
            // The `OK` of a watcher's AUTH.
            if b0 == UInt8(ascii: "O") && watcherToken != nil { return .ignore }
            return .error
        case .navsyncSSE:
            // Bytes 7 and 8 of each line (LineScanner.eventStream()): `event: change`,
            // `event: state` (the first: subscribed; later: a resync), `event: denied`.
            if b0 == UInt8(ascii: "c") && b1 == UInt8(ascii: "h") { return .event }
            if b0 == UInt8(ascii: "s") && b1 == UInt8(ascii: "t") { return .subscribed }
            if b0 == UInt8(ascii: "d") && b1 == UInt8(ascii: "e") { return .error }
            return .ignore
        case .redis, .redisTLS:
            // *3 / $7 / message / $8 / navbench / $N / payload; the SUBSCRIBE reply has a
            // "subscribe" bulk string. Payloads start with 'E', channel with 'n'.
            if b0 == UInt8(ascii: "m") { return .event }
            if b0 == UInt8(ascii: "s") { return .subscribed }
            if b0 == UInt8(ascii: "-") { return .error }
            return .ignore
        case .nats:
            // INFO {...} / PONG (our PING: subscribed) / MSG ... + payload / PING / -ERR
            if b0 == UInt8(ascii: "M") { return .event }
            if b0 == UInt8(ascii: "P") { return b1 == UInt8(ascii: "O") ? .subscribed : .ping }
            if b0 == UInt8(ascii: "-") { return .error }
            return .ignore
        }
    }

    /// Classifies a line the actor received.
    func actorLine(_ b0: UInt8, _ b1: UInt8) -> LineKind {
        switch system {
        case .navsync, .navsyncWebSocket, .navsyncSSE, .navsyncTLS, .navsyncWSS, .floor:
            if b0 == UInt8(ascii: "O") { return .changeAcknowledged }
            return .error
        case .redis, .redisTLS:
            // +OK for the SET, :<receivers> for the PUBLISH.
            if b0 == UInt8(ascii: ":") { return .changeAcknowledged }
            if b0 == UInt8(ascii: "-") { return .error }
            return .ignore
        case .nats:
            if b0 == UInt8(ascii: "P") && b1 == UInt8(ascii: "I") { return .ping }
            if b0 == UInt8(ascii: "-") { return .error }
            return .ignore
        }
    }

    var pong: [UInt8] { Array("PONG\r\n".utf8) }
}
