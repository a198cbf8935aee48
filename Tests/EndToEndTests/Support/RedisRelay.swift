import Foundation
import Glibc

/// A TCP relay between one daemon and Redis that can hold back what Redis
/// sends to that daemon's subscription: the daemon's commands still go
/// through and are answered, but the changes published on the fleet's
/// channel reach it only once `release` is called. So a test can put one
/// daemon's copy of a room behind the fleet without stopping any process.
///
/// A connection counts as the subscription once it sends `SUBSCRIBE` (as a
/// RESP bulk string, so no command argument is mistaken for it). While held,
/// its relay thread stops reading from Redis, and the messages wait in the
/// kernel's socket buffers.
/// Shared between the test's thread and the relay's own threads: every
/// mutable field is guarded by `condition`.
final class RedisRelay: @unchecked Sendable {
    let port: Int
    private let redisPort: Int
    private let listener: Int32
    private let condition = NSCondition()
    private var holding = false
    private var stopped = false
    private var sockets: [Int32] = []

    var url: String { "redis://127.0.0.1:\(port)" }

    init(toRedisPort redisPort: Int) throws {
        self.redisPort = redisPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            Glibc.close(listener)
            throw RelayError(what: "bind/listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    struct RelayError: Error, CustomStringConvertible {
        var what: String
        var description: String { "relay: \(what)" }
    }

    /// From now on, nothing more Redis sends to the subscription is passed on.
    func hold() {
        condition.lock()
        holding = true
        condition.unlock()
    }

    /// What was held, and everything after it, is passed on again.
    func release() {
        condition.lock()
        holding = false
        condition.broadcast()
        condition.unlock()
    }

    /// Ends every connection and the listener (the daemon sees Redis gone).
    func stop() {
        condition.lock()
        stopped = true
        holding = false
        condition.broadcast()
        // Under the lock: a pump that ends closes its sockets under it too,
        // so no number shut down here can belong to anything else by then.
        for fd in sockets { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        condition.unlock()
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = Self.connectToRedis(port: redisPort)
            condition.lock()
            if stopped || server < 0 {
                condition.unlock()
                Glibc.close(client)
                if server >= 0 { Glibc.close(server) }
                return
            }
            sockets += [client, server]
            condition.unlock()
            let subscribed = SubscriptionFlag()
            Thread { [self] in
                pump(from: client, to: server, marking: subscribed)
                pumpEnded(client, server, subscribed)
            }.start()
            Thread { [self] in
                pump(from: server, to: client, heldWhen: subscribed)
                pumpEnded(client, server, subscribed)
            }.start()
        }
    }

    /// The second of a connection's two pumps to end closes its sockets.
    private func pumpEnded(_ client: Int32, _ server: Int32, _ flag: SubscriptionFlag) {
        guard flag.endOnePump() else { return }
        condition.lock()
        sockets.removeAll { $0 == client || $0 == server }
        Glibc.close(client)
        Glibc.close(server)
        condition.unlock()
    }

    /// Daemon to Redis: passed on at once; notes a `SUBSCRIBE`.
    private func pump(from source: Int32, to destination: Int32, marking subscribed: SubscriptionFlag) {
        let marker = Array("$9\r\nSUBSCRIBE\r\n".utf8)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = read(source, &buffer, buffer.count)
            guard count > 0 else { break }
            let chunk = Array(buffer[0..<count])
            if !subscribed.isSet, Self.contains(chunk.map { $0 >= 97 && $0 <= 122 ? $0 - 32 : $0 }, marker) {
                subscribed.set()
            }
            guard Self.writeAll(destination, chunk) else { break }
        }
        Glibc.shutdown(destination, Int32(SHUT_WR))
    }

    /// Redis to the daemon: waits while the subscription is held.
    private func pump(from source: Int32, to destination: Int32, heldWhen subscribed: SubscriptionFlag) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            condition.lock()
            while holding && subscribed.isSet && !stopped { condition.wait() }
            condition.unlock()
            let count = read(source, &buffer, buffer.count)
            guard count > 0 else { break }
            condition.lock()
            // A hold that began while this thread was reading keeps what it read too.
            while holding && subscribed.isSet && !stopped { condition.wait() }
            condition.unlock()
            guard Self.writeAll(destination, Array(buffer[0..<count])) else { break }
        }
        Glibc.shutdown(destination, Int32(SHUT_WR))
    }

    private static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard bytes.count >= needle.count else { return false }
        return (0...(bytes.count - needle.count)).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    private static func connectToRedis(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            Glibc.close(fd)
            return -1
        }
        return fd
    }
}

/// Set once a relayed connection has subscribed; read by the other
/// direction's thread. Also counts the connection's pumps still running.
private final class SubscriptionFlag: @unchecked Sendable {  // its fields are only touched under `lock`
    private let lock = NSLock()
    private var value = false
    private var pumpsRunning = 2
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
    /// True for the last pump to end.
    func endOnePump() -> Bool {
        lock.withLock {
            pumpsRunning -= 1
            return pumpsRunning == 0
        }
    }
}
