import Foundation
import Glibc
import XCTest

/// A blocking TCP client for tests, speaking lines. Every read is bounded by
/// a timeout through poll(2), so a missing reply fails the test instead of
/// hanging it.
final class LineClient {
    let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var isClosedByPeer = false

    struct Timeout: Error, CustomStringConvertible {
        var waitingFor: String
        var description: String { "timed out waiting for \(waitingFor)" }
    }

    struct ConnectFailed: Error { var errno: Int32 }

    init(port: Int, host: String = "127.0.0.1") throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if rc != 0 {
            let error = errno
            Glibc.close(fd)
            throw ConnectFailed(errno: error)
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) { sendBytes(Array(text.utf8)) }

    func sendBytes(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { _ = waitWritable(1); continue }
                return
            }
            offset += n
        }
    }

    /// Sends one line and returns the first reply line.
    func request(_ line: String, timeout: TimeInterval = 5) throws -> String {
        send(line + "\n")
        return try readLine(timeout: timeout)
    }

    func readLine(timeout: TimeInterval = 5) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0, !isClosedByPeer else { throw Timeout(waitingFor: "a line (have \(buffer.count) bytes)") }
            fill(timeout: remaining)
        }
    }

    func readLines(_ count: Int, timeout: TimeInterval = 10) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var lines: [String] = []
        while lines.count < count {
            lines.append(try readLine(timeout: max(0.001, deadline.timeIntervalSinceNow)))
        }
        return lines
    }

    /// Reads lines until the server closes the connection.
    func readUntilClosed(timeout: TimeInterval = 5) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        while !isClosedByPeer {
            guard deadline.timeIntervalSinceNow > 0 else { throw Timeout(waitingFor: "the server to close") }
            fill(timeout: deadline.timeIntervalSinceNow)
        }
        var lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        buffer.removeAll()
        return lines
    }

    /// True when nothing arrives within `seconds` (for "no reply" rules).
    func staysQuiet(for seconds: TimeInterval) -> Bool {
        if !buffer.isEmpty { return false }
        fill(timeout: seconds)
        return buffer.isEmpty
    }

    func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

    /// Reads whatever is available within the timeout into the buffer.
    private func fill(timeout: TimeInterval) {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(max(1, min(timeout * 1000, 60_000)))
        guard poll(&pfd, 1, ms) > 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            buffer.append(contentsOf: chunk[..<n])
        } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
            isClosedByPeer = true
        }
    }

    private func waitWritable(_ seconds: TimeInterval) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        return poll(&pfd, 1, Int32(seconds * 1000)) > 0
    }
}
