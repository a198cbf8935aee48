import Foundation
import Glibc
import XCTest

/// An attacking connection on a raw socket: it sends without reading (the
/// daemon's answers pile up on the daemon's side, which is the attack), and
/// reads only when the test says so. Nothing here blocks without a bound:
/// a daemon that stops taking bytes is the expected outcome of a flood, not
/// a hang, so sending gives up after a stall instead of failing the test.
final class HostilePeer {
    let fd: Int32

    /// `receiveBuffer` shrinks SO_RCVBUF before connecting, so the kernel
    /// takes little of the daemon's output off its hands.
    init(port: Int, receiveBuffer: Int32? = 4096) throws {
        fd = try Hardening.connectSocket(port: port, receiveBuffer: receiveBuffer)
    }

    deinit { close(fd) }

    /// Lets the kernel take the daemon's output in large pieces again, for
    /// reading back what an attack left queued: a window of a few KiB makes
    /// every reply a thousand round trips. The window scale was fixed at
    /// connect, so the window stays under 64 KiB, which is plenty here.
    func widenReceiveBuffer() {
        var size: Int32 = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_WINDOW_CLAMP, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Sends `pattern` again and again, never reading, until `total` bytes
    /// are sent, or the daemon has taken nothing for `stall` seconds, or
    /// `limit` seconds have passed. Returns the bytes sent (the last pattern
    /// may be cut anywhere).
    func flood(_ pattern: [UInt8], total: Int, stall: TimeInterval = 1, limit: TimeInterval = 20) -> Int {
        precondition(!pattern.isEmpty)
        var sent = 0
        let deadline = Date().addingTimeInterval(limit)
        var lastProgress = Date()
        while sent < total, Date() < deadline, Date().timeIntervalSince(lastProgress) < stall {
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&pfd, 1, 50) > 0 else { continue }
            let offset = sent % pattern.count
            let count = min(pattern.count - offset, total - sent)
            let n = pattern[offset..<(offset + count)].withUnsafeBytes {
                send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            if n > 0 {
                sent += n
                lastProgress = Date()
            } else if n < 0 && errno != EAGAIN && errno != EINTR {
                break
            }
        }
        return sent
    }

    /// Sends `bytes` (while reading, so a daemon that waits for its output
    /// to drain before it reads more is not deadlocked) and hands every
    /// received chunk to `consume`, until `consume` returns true, the peer
    /// closes, or `timeout` passes. Returns whether `consume` was satisfied.
    @discardableResult
    func exchange(sending bytes: [UInt8] = [], timeout: TimeInterval,
                  _ consume: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        var offset = 0
        let deadline = Date().addingTimeInterval(timeout)
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while Date() < deadline {
            let wantsToSend = offset < bytes.count
            var pfd = pollfd(fd: fd, events: Int16(POLLIN) | (wantsToSend ? Int16(POLLOUT) : 0), revents: 0)
            guard poll(&pfd, 1, 50) > 0 else { continue }
            if wantsToSend && pfd.revents & Int16(POLLOUT) != 0 {
                let n = bytes[offset...].withUnsafeBytes {
                    send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
                if n > 0 { offset += n }
            }
            if pfd.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n > 0 {
                    if chunk.withUnsafeBytes({ consume(UnsafeRawBufferPointer(rebasing: $0[..<n])) }) { return true }
                } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                    return false
                }
            }
        }
        return false
    }

    /// Sends `text` and reads until `count` whole lines have come; the lines
    /// themselves (for short answers: AUTH, PING, an error).
    func lines(sending text: String = "", count: Int, timeout: TimeInterval = 20) -> [String] {
        var tally = LineTally(keep: 4096)
        exchange(sending: Array(text.utf8), timeout: timeout) { tally.take($0); return tally.lines.count >= count }
        return tally.lines.map(\.start)
    }

    /// Upgrades this connection to a WebSocket on `/ws`; true on `101`.
    func upgradeToWebSocket(timeout: TimeInterval = 20) -> Bool {
        let request = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(LineClient.sampleKey)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        var head: [UInt8] = []
        let end = Array("\r\n\r\n".utf8)
        // Byte at a time would be slow to write; the daemon sends nothing
        // after the 101 until a frame arrives, so reading past the head
        // cannot swallow a frame.
        exchange(sending: Array(request.utf8), timeout: timeout) { chunk in
            head += chunk
            return head.count >= 4 && head.indices.dropLast(3).contains { Array(head[$0..<($0 + 4)]) == end }
        }
        return String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101 ")
    }
}

/// Lines counted off a byte stream without keeping them: each line's first
/// `keep` bytes and its length. Replies here can be hundreds of kilobytes
/// each and number in the thousands, so newlines are found with memchr.
struct LineTally {
    struct Line {
        /// The line's first bytes, as text.
        var start: String
        /// Its length without the `\n`.
        var length: Int
    }

    let keep: Int
    private(set) var lines: [Line] = []
    private var partStart: [UInt8] = []
    private var partLength = 0

    init(keep: Int = 64) { self.keep = keep }

    mutating func take(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let rest = bytes.count - offset
            let found = memchr(base + offset, 10, rest).map { base.distance(to: UnsafeRawPointer($0)) }
            let upTo = found ?? bytes.count
            if partStart.count < keep {
                let wanted = min(keep - partStart.count, upTo - offset)
                partStart += UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + wanted)])
            }
            partLength += upTo - offset
            guard let newline = found else { return }
            lines.append(Line(start: String(decoding: partStart, as: UTF8.self), length: partLength))
            partStart.removeAll(keepingCapacity: true)
            partLength = 0
            offset = newline + 1
        }
    }
}

/// Server frames (unmasked, RFC 6455) counted off a byte stream without
/// keeping their payloads: each frame's opcode, length and first bytes.
struct FrameTally {
    struct Frame {
        var opcode: UInt8
        var length: Int
        /// The payload's first bytes, as text.
        var start: String
    }

    let keep: Int
    private(set) var frames: [Frame] = []
    /// Frames of each opcode, also for the frames not kept in `frames`.
    private(set) var countByOpcode: [UInt8: Int] = [:]
    /// Opcodes whose frames are only counted (pongs, by the hundred thousand).
    let countOnly: Set<UInt8>
    private var header: [UInt8] = []
    private var payloadLeft = 0
    private var current = Frame(opcode: 0, length: 0, start: "")
    private var currentStart: [UInt8] = []

    init(keep: Int = 64, countOnly: Set<UInt8> = []) {
        self.keep = keep
        self.countOnly = countOnly
    }

    mutating func take(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            if payloadLeft > 0 {
                let n = min(payloadLeft, bytes.count - offset)
                if currentStart.count < keep {
                    currentStart += UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + min(n, keep - currentStart.count))])
                }
                payloadLeft -= n
                offset += n
                if payloadLeft == 0 { finishFrame() }
                continue
            }
            header.append(bytes[offset])
            offset += 1
            guard header.count >= 2 else { continue }
            let short = Int(header[1] & 0x7F)
            let needed = short == 126 ? 4 : short == 127 ? 10 : 2
            guard header.count == needed else { continue }
            let length = short == 126 ? Int(header[2]) << 8 | Int(header[3])
                : short == 127 ? header[2..<10].reduce(0) { $0 << 8 | Int($1) } : short
            current = Frame(opcode: header[0] & 0x0F, length: length, start: "")
            header.removeAll(keepingCapacity: true)
            payloadLeft = length
            if length == 0 { finishFrame() }
        }
    }

    private mutating func finishFrame() {
        countByOpcode[current.opcode, default: 0] += 1
        if !countOnly.contains(current.opcode) {
            current.start = String(decoding: currentStart, as: UTF8.self)
            frames.append(current)
        }
        currentStart.removeAll(keepingCapacity: true)
    }
}
