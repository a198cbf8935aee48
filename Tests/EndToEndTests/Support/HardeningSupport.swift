import NavSyncCore
import Foundation
import Glibc
import XCTest

/// Helpers for the hardening tests (durability under kill -9, soak, hostile
/// clients, signals and files). Everything lives in this namespace so these
/// names never collide with the other end-to-end helpers.
enum Hardening {
    /// `NAVSYNC_LONG=1` selects the long forms (many more kills, longer soaks).
    static var long: Bool { ProcessInfo.processInfo.environment["NAVSYNC_LONG"] == "1" }
    /// `NAVSYNC_SANITIZED=1`: the daemon under test is a sanitizer build (see
    /// Tests/sanitizers/run.sh). Its memory and speed say nothing about ours,
    /// so RSS and latency bounds are reported but not asserted.
    static var sanitized: Bool { ProcessInfo.processInfo.environment["NAVSYNC_SANITIZED"] == "1" }

    // MARK: - A daemon we can kill, restart, limit and measure

    /// The daemon the hardening tests kill, restart, limit and measure: the
    /// same launcher as every other end-to-end test.
    typealias Daemon = DaemonProcess

    static func statusField(_ name: String, pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return -1 }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) ?? -1
        }
        return -1
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: - Many connections read by one thread

    /// Many client sockets whose incoming lines are collected by one poll(2)
    /// thread, so a test can hold hundreds of watchers without a thread each.
    final class Swarm: @unchecked Sendable {  // all mutable state is guarded by lock
        private let lock = NSLock()
        private var fds: [Int32] = []
        private var buffers: [[UInt8]] = []
        private var received: [[String]] = []
        private var closed: [Bool] = []
        private var thread: Thread?
        private var stopping = false
        private let done = DispatchSemaphore(value: 0)

        init() {}

        /// Connects one more socket (blocking connect) and returns its index.
        /// `receiveBuffer` shrinks SO_RCVBUF, for a client that reads slowly.
        @discardableResult
        func connect(port: Int, receiveBuffer: Int32? = nil) throws -> Int {
            let fd = try Hardening.connectSocket(port: port, receiveBuffer: receiveBuffer)
            lock.lock()
            defer { lock.unlock() }
            fds.append(fd)
            buffers.append([])
            received.append([])
            closed.append(false)
            return fds.count - 1
        }

        var count: Int { lock.lock(); defer { lock.unlock() }; return fds.count }

        func send(_ index: Int, _ text: String) {
            lock.lock()
            let fd = fds[index]
            lock.unlock()
            Hardening.sendAll(fd, Array(text.utf8))
        }

        func sendToAll(_ text: String) {
            for i in 0..<count { send(i, text) }
        }

        /// Lines received so far on one socket.
        func lines(_ index: Int) -> [String] { lock.lock(); defer { lock.unlock() }; return received[index] }

        func allLines() -> [[String]] { lock.lock(); defer { lock.unlock() }; return received }

        func isClosed(_ index: Int) -> Bool { lock.lock(); defer { lock.unlock() }; return closed[index] }

        /// Waits (bounded) until `condition` holds for the lines of every socket.
        func waitForAll(timeout: TimeInterval, _ condition: (Int, [String]) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let snapshot = allLines()
                if snapshot.indices.allSatisfy({ condition($0, snapshot[$0]) }) { return true }
                usleep(5_000)
            }
            return false
        }

        /// Starts the reading thread; sockets connected later are read too.
        func startReading() {
            let thread = Thread { [self] in self.readLoop() }
            thread.stackSize = 1 << 20
            self.thread = thread
            thread.start()
        }

        private func readLoop() {
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                lock.lock()
                if stopping {
                    lock.unlock()
                    break
                }
                var polled = fds.enumerated().filter { !closed[$0.offset] }
                    .map { pollfd(fd: $0.element, events: Int16(POLLIN), revents: 0) }
                let indices = fds.indices.filter { !closed[$0] }
                lock.unlock()
                if polled.isEmpty {
                    usleep(2_000)
                    continue
                }
                let ready = poll(&polled, nfds_t(polled.count), 20)
                guard ready > 0 else { continue }
                for (slot, entry) in polled.enumerated() where entry.revents != 0 {
                    let n = chunk.withUnsafeMutableBytes { recv(entry.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                    let index = indices[slot]
                    lock.lock()
                    if n > 0 {
                        buffers[index].append(contentsOf: chunk[..<n])
                        while let newline = buffers[index].firstIndex(of: UInt8(ascii: "\n")) {
                            received[index].append(String(decoding: buffers[index][..<newline], as: UTF8.self))
                            buffers[index].removeSubrange(...newline)
                        }
                    } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                        closed[index] = true
                    }
                    lock.unlock()
                }
            }
            done.signal()
        }

        /// Stops reading and closes every socket.
        func close() {
            lock.lock()
            let reading = thread != nil && !stopping
            stopping = true
            lock.unlock()
            if reading { _ = done.wait(timeout: .now() + 5) }
            lock.lock()
            for fd in fds { Glibc.close(fd) }
            fds = fds.map { _ in -1 }
            lock.unlock()
        }

        deinit { close() }
    }

    // MARK: - Raw sockets

    /// A blocking TCP connection to 127.0.0.1:port (no reads are done here).
    static func connectSocket(port: Int, receiveBuffer: Int32? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: errno \(errno)") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            let error = errno
            Glibc.close(fd)
            throw Failure("connect to port \(port): errno \(error)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// Sends every byte (waiting while the socket is full); gives up quietly
    /// when the peer is gone.
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                offset += n
            } else if errno == EINTR || errno == EAGAIN {
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&pfd, 1, 100)
            } else {
                return
            }
        }
    }

    /// Closes with a TCP reset instead of a FIN (SO_LINGER 0).
    static func resetAndClose(_ fd: Int32) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        Glibc.close(fd)
    }

    // MARK: - Lines

    /// `STATE <rev> <route>` or `EVENT <rev> <op> <route>`, parsed.
    struct Observed: Equatable {
        var revision: UInt64
        var route: String
        var isEvent: Bool

        init?(_ line: String) {
            // Split on the UTF-8 view: routes can be hundreds of KB, and
            // splitting Characters would dominate the tests' time.
            let parts = line.utf8.split(separator: UInt8(ascii: " "), maxSplits: 3, omittingEmptySubsequences: false)
                .map { Substring($0) }
            if parts.count == 3, parts[0] == "STATE", let rev = UInt64(parts[1]) {
                (revision, route, isEvent) = (rev, String(parts[2]), false)
            } else if parts.count == 4, parts[0] == "EVENT", let rev = UInt64(parts[1]), !parts[3].utf8.contains(UInt8(ascii: " ")) {
                (revision, route, isEvent) = (rev, String(parts[3]), true)
            } else {
                return nil
            }
        }
    }

    /// The revision of an `OK <rev>` line.
    static func okRevision(_ line: String) -> UInt64? {
        guard line.hasPrefix("OK ") else { return nil }
        return UInt64(line.dropFirst(3))
    }

    // MARK: - Randomness and locking

    // The generic helpers shared with the other end-to-end tests
    // (Support/Concurrency.swift), under the names these tests use.
    typealias Random = SplitMix64
    typealias Shared = Locked

    /// Runs `body(i)` for i in 0..<count on threads of their own and waits
    /// (bounded); false if some thread did not finish in time.
    @discardableResult
    static func onThreads(_ count: Int, timeout: TimeInterval, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
        runOnThreads(count, timeout: timeout, body)
    }

    /// A fresh directory for one test's files.
    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "navsync-hard-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Percent-encodes data the way routes carry it.
    static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}
