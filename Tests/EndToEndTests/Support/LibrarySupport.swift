import Foundation
import NavSyncKit
import XCTest

/// Waits on the main actor, without blocking it, until `condition` holds;
/// false (after failing the test) when `seconds` pass first.
@MainActor
@discardableResult
func eventually(_ what: String, seconds: Double = 20, file: StaticString = #filePath, line: UInt = #line,
                _ condition: @MainActor () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !condition() {
        if ContinuousClock.now >= deadline {
            XCTFail("timed out after \(seconds) s waiting for \(what)", file: file, line: line)
            return false
        }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// A route as the daemon writes it, from what a `SharedNavigation<NavEntry>` shows.
@MainActor
func route(of navigation: SharedNavigation<NavEntry>) -> String {
    navigation.stack.map { entry in
        "/" + entry.screen + (entry.data.map { ":" + percentEncoded($0) } ?? "")
    }.joined() + navigation.sheets.map { entry in
        "#" + entry.screen + (entry.data.map { ":" + percentEncoded($0) } ?? "")
    }.joined()
}

/// The protocol's escaping: every byte outside `A-Z a-z 0-9 - . _ ~` as `%XX`.
func percentEncoded(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: "~"):
            out.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            out += String(format: "%%%02X", byte)
        }
    }
    return out
}

/// The thread ids of the process's threads that carry this name (the library
/// names its loop threads `NavSyncKit`), from /proc: other threads come and
/// go with the concurrency runtime, and an object from an earlier test may
/// still be ending its own, so a test follows the ids, never a count.
func threadIDs(named name: String = "NavSyncKit") -> Set<String> {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return Set(tasks.filter { task in
        let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
        return comm.trimmingCharacters(in: .whitespacesAndNewlines) == name
    })
}

/// Collects what a `changes` stream yields, on a task of its own.
@MainActor
final class ChangeLog<Screen: NavScreen> {
    private(set) var changes: [NavChange<Screen>] = []
    private(set) var finished = false
    private var reader: Task<Void, Never>?

    init(_ stream: AsyncStream<NavChange<Screen>>) {
        reader = Task { @MainActor [weak self] in
            for await change in stream { self?.changes.append(change) }
            self?.finished = true
        }
    }

    var revisions: [UInt64] { changes.map(\.revision) }
}

/// A stand-in for a daemon that answers each line it reads with what
/// `answer` returns: a broken or hostile peer, for what a real daemon never
/// sends. Serves connections one after another on a thread of its own,
/// until `stop()`.
final class ScriptedPeer: @unchecked Sendable {  // fd is set once in init; `running` is guarded by its Locked
    let port: Int
    private let fd: Int32
    private let running = Locked(true)

    init(answer: @escaping @Sendable (String) -> String?) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw LineClient.ConnectFailed(errno: errno) }
        port = Int(UInt16(bigEndian: address.sin_port))
        let listener = fd
        let running = self.running
        Thread {
            while running.current {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                var pending = [UInt8]()
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = read(connection, &buffer, buffer.count)
                    if count <= 0 { break }
                    pending += buffer[0..<count]
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        let line = String(decoding: pending[..<newline], as: UTF8.self)
                        pending.removeSubrange(...newline)
                        if let reply = answer(line) {
                            _ = Array((reply + "\n").utf8).withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                        }
                    }
                }
                close(connection)
            }
        }.start()
    }

    func stop() {
        running.withLock { $0 = false }
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
