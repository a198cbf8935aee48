import Foundation
import Glibc
import XCTest

/// A blocking client for tests, speaking lines over TCP (IPv4 or IPv6) or a
/// Unix socket. Every read is bounded by a timeout through poll(2), so a
/// missing reply fails the test instead of hanging it.
/// One thread at a time may use a client; it may be handed between threads.
final class LineClient: @unchecked Sendable {
    let fd: Int32
    /// Received bytes; those before `readIndex` are consumed.
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private(set) var isClosedByPeer = false
    private var isClosed = false

    struct Timeout: Error, CustomStringConvertible {
        var waitingFor: String
        var description: String { "timed out waiting for \(waitingFor)" }
    }

    struct ConnectFailed: Error, CustomStringConvertible {
        var errno: Int32
        var description: String { "connect failed: \(String(cString: strerror(errno)))" }
    }

    /// Connects over TCP. A host with a `:` is an IPv6 literal.
    /// `receiveBufferBytes` shrinks SO_RCVBUF before connecting, so a client
    /// that stops reading backs the server up sooner. `source` (IPv4) binds
    /// the client's end first: every 127.0.0.0/8 address is loopback here,
    /// so one test can be several peers to the daemon.
    init(port: Int, host: String = "127.0.0.1", receiveBufferBytes: Int? = nil, source: String? = nil) throws {
        let v6 = host.contains(":")
        fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        if var size = receiveBufferBytes.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source, !v6 {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, source, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            try checkConnected(bound)
        }
        let rc: Int32
        if v6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, host, &address.sin6_addr)
            rc = Self.connect(fd, &address)
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, host, &address.sin_addr)
            rc = Self.connect(fd, &address)
        }
        try checkConnected(rc)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Connects to a Unix domain socket.
    init(unixPath: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(unixPath.utf8)
        precondition(pathBytes.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long")
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        try checkConnected(Self.connect(fd, &address))
    }

    private static func connect<Address>(_ fd: Int32, _ address: inout Address) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<Address>.size))
            }
        }
    }

    private func checkConnected(_ rc: Int32) throws {
        guard rc != 0 else { return }
        let error = errno
        Glibc.close(fd)
        isClosed = true
        throw ConnectFailed(errno: error)
    }

    deinit { close() }

    /// Closes the socket; safe to call twice.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(fd)
    }

    func send(_ text: String) { sendBytes(Array(text.utf8)) }

    /// Sends everything, or fails the test when the peer has not taken it
    /// within `timeout` (a server that stopped reading must not hang a test).
    func sendBytes(_ bytes: [UInt8], timeout: TimeInterval = 20) {
        let deadline = Date().addingTimeInterval(timeout)
        var offset = 0
        while offset < bytes.count {
            guard waitWritable(until: deadline) else {
                XCTFail("sending \(bytes.count) bytes timed out after \(offset)")
                return
            }
            let n = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            offset += n
        }
    }

    /// Sends one line and returns the first reply line.
    func request(_ line: String, timeout: TimeInterval = 20) throws -> String {
        send(line + "\n")
        return try readLine(timeout: timeout)
    }

    /// Sends one line and returns the reply lines up to and including `END`.
    func requestList(_ line: String, timeout: TimeInterval = 20) throws -> [String] {
        send(line + "\n")
        let deadline = Date().addingTimeInterval(timeout)
        var lines: [String] = []
        repeat {
            lines.append(try readLine(timeout: max(0.001, deadline.timeIntervalSinceNow)))
        } while lines.last != "END"
        return lines
    }

    func readLine(timeout: TimeInterval = 20) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let line = takeLine() { return line }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0, !isClosedByPeer else {
                throw Timeout(waitingFor: "a line (have \(buffer.count - readIndex) bytes\(isClosedByPeer ? ", peer closed" : ""))")
            }
            fill(timeout: remaining)
        }
    }

    func readLines(_ count: Int, timeout: TimeInterval = 20) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var lines: [String] = []
        while lines.count < count {
            lines.append(try readLine(timeout: max(0.001, deadline.timeIntervalSinceNow)))
        }
        return lines
    }

    /// Exactly `count` bytes, for HTTP bodies and WebSocket frames.
    func readBytes(_ count: Int, timeout: TimeInterval = 20) throws -> [UInt8] {
        let deadline = Date().addingTimeInterval(timeout)
        while buffer.count - readIndex < count {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0, !isClosedByPeer else {
                throw Timeout(waitingFor: "\(count) bytes (have \(buffer.count - readIndex))")
            }
            fill(timeout: remaining)
        }
        defer { readIndex += count }
        return Array(buffer[readIndex..<(readIndex + count)])
    }

    /// Reads lines until the server closes the connection.
    func readUntilClosed(timeout: TimeInterval = 20) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        while !isClosedByPeer {
            guard deadline.timeIntervalSinceNow > 0 else { throw Timeout(waitingFor: "the server to close") }
            fill(timeout: deadline.timeIntervalSinceNow)
        }
        var lines: [String] = []
        while let line = takeLine() { lines.append(line) }
        if readIndex < buffer.count {
            lines.append(String(decoding: buffer[readIndex...], as: UTF8.self))
        }
        buffer.removeAll()
        readIndex = 0
        return lines
    }

    /// True when nothing arrives within `seconds` (for "no reply" rules).
    func staysQuiet(for seconds: TimeInterval) -> Bool {
        if readIndex < buffer.count { return false }
        fill(timeout: seconds)
        return readIndex == buffer.count
    }

    func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

    private func takeLine() -> String? {
        guard let newline = buffer[readIndex...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let line = String(decoding: buffer[readIndex..<newline], as: UTF8.self)
        readIndex = newline + 1
        return line
    }

    /// Reads whatever is available within the timeout into the buffer.
    private func fill(timeout: TimeInterval) {
        if readIndex > 0 {
            buffer.removeSubrange(..<readIndex)
            readIndex = 0
        }
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(max(1, min(timeout * 1000, 60_000)))
        guard poll(&pfd, 1, ms) > 0 else { return }
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: 65_536))
        let n = buffer[start...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        let error = errno
        buffer.removeSubrange((start + max(n, 0))...)
        if n == 0 || (n < 0 && error != EINTR && error != EAGAIN) {
            isClosedByPeer = true
        }
    }

    private func waitWritable(until deadline: Date) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let ms = Int32(max(0, min(deadline.timeIntervalSinceNow * 1000, 60_000)))
        return poll(&pfd, 1, ms) > 0
    }
}
