import Foundation
import XCTest

/// One HTTP response as read off the wire.
struct HTTPReply {
    var status: Int
    /// Names lowercased.
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// HTTP/1.1 and WebSocket (RFC 6455, client side: masked frames) over a
/// test's `LineClient`, written out by hand so the tests see the bytes.
extension LineClient {
    static let defaultHost = "127.0.0.1"

    /// Sends a request head (`Host` added unless given).
    func sendRequest(_ method: String, _ target: String, headers: [(String, String)] = [], body: String = "") {
        var head = "\(method) \(target) HTTP/1.1\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { head += "Host: \(Self.defaultHost)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty { head += "Content-Length: \(body.utf8.count)\r\n" }
        send(head + "\r\n" + body)
    }

    /// Reads one response; a HEAD response or a 101 has no body.
    func readReply(headOnly: Bool = false, timeout: TimeInterval = 20) throws -> HTTPReply {
        let statusLine = try readLine(timeout: timeout)
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0] == "HTTP/1.1", let status = Int(parts[1]) else {
            throw Timeout(waitingFor: "a status line, got \(String(reflecting: statusLine))")
        }
        var headers: [String: String] = [:]
        while true {
            var line = try readLine(timeout: timeout)
            if line.hasSuffix("\r") { line.removeLast() }
            if line.isEmpty { break }
            let pair = line.split(separator: ":", maxSplits: 1)
            headers[pair[0].lowercased()] = pair.count > 1 ? pair[1].trimmingCharacters(in: .whitespaces) : ""
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        let body = headOnly || status == 101 ? [] : try readBytes(length, timeout: timeout)
        return HTTPReply(status: status, headers: headers, body: body)
    }

    func get(_ target: String, headers: [(String, String)] = []) throws -> HTTPReply {
        sendRequest("GET", target, headers: headers)
        return try readReply()
    }

    // MARK: - WebSocket

    static let sampleKey = "dGhlIHNhbXBsZSBub25jZQ=="

    func upgrade(origin: String? = nil, host: String = LineClient.defaultHost, extra: [(String, String)] = []) throws -> HTTPReply {
        var headers = [("Host", host), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                       ("Sec-WebSocket-Key", Self.sampleKey), ("Sec-WebSocket-Version", "13")] + extra
        if let origin { headers.append(("Origin", origin)) }
        sendRequest("GET", "/ws", headers: headers)
        return try readReply()
    }

    /// One client frame, masked as RFC 6455 requires of clients.
    func sendFrame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) {
        sendBytes(Self.clientFrame(opcode: opcode, payload, fin: fin))
    }

    /// The bytes of one masked client frame, for tests that write frames
    /// themselves (a flood sent without blocking, many frames in one write).
    static func clientFrame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            bytes.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(0x80 | 127)
            bytes += (0..<8).reversed().map { UInt8((UInt64(payload.count) >> (8 * UInt64($0))) & 0xFF) }
        }
        let mask: [UInt8] = (0..<4).map { _ in UInt8.random(in: 0...255) }
        bytes += mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return bytes
    }

    func sendText(_ text: String) { sendFrame(opcode: 0x1, Array(text.utf8)) }

    /// The next server frame (servers do not mask).
    func readFrame(timeout: TimeInterval = 20) throws -> (opcode: UInt8, payload: [UInt8]) {
        let head = try readBytes(2, timeout: timeout)
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            let more = try readBytes(2, timeout: timeout)
            length = Int(more[0]) << 8 | Int(more[1])
        } else if length == 127 {
            length = try readBytes(8, timeout: timeout).reduce(0) { $0 << 8 | Int($1) }
        }
        return (head[0] & 0x0F, try readBytes(length, timeout: timeout))
    }

    struct UnexpectedFrame: Error, CustomStringConvertible {
        var opcode: UInt8
        var payload: [UInt8]
        var description: String { "frame with opcode \(opcode), payload \(payload)" }
    }

    /// The next text message (each is one protocol line).
    func readText(timeout: TimeInterval = 20) throws -> String {
        let frame = try readFrame(timeout: timeout)
        guard frame.opcode == 0x1 else { throw UnexpectedFrame(opcode: frame.opcode, payload: frame.payload) }
        return String(decoding: frame.payload, as: UTF8.self)
    }

    /// Reads frames until a close frame; returns its code (0 without one).
    func readClose(timeout: TimeInterval = 20) throws -> UInt16 {
        while true {
            let frame = try readFrame(timeout: timeout)
            guard frame.opcode == 0x8 else { continue }
            return frame.payload.count >= 2 ? UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) : 0
        }
    }
}
