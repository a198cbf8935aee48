import Glibc
import UVLoop

/// More watchers than one process may open (a fleet row: 30,000 watchers
/// where a process holds 20,000 descriptors) are spread over several bench
/// processes: one *leader* with the actor, and *helpers* holding watchers
/// only. A helper tells its leader, over one loopback connection, when all
/// its watchers are subscribed and, for each event count k, when all of
/// them hold k events, with the monotonic clock's time (shared by every
/// process of the machine). The leader takes a change as delivered when its
/// own watchers and every helper's hold it, at the latest of their times.
///
/// Lines, helper to leader: `S <watchers> <pid>`, `R <k> <ns>`,
/// `L <lost> <extra> <errors> <resyncs>`; leader to helper: `D <changes>`.
final class HelperLink {
    /// The leader's view of one helper.
    final class Peer {
        let connection: StreamConnection
        var scanner = LineBuffer()
        var watchers = 0
        /// The helper's process, whose CPU time counts as the bench's.
        var pid: Int32?
        var subscribed = false
        /// Highest event count all its watchers hold, and when they reached it.
        var reached = 0
        var reachedAt: [Int: UInt64] = [:]
        var tally: (lost: Int, extra: Int, errors: Int, resyncs: Int)?
        init(connection: StreamConnection) { self.connection = connection }
    }

    private(set) var peers: [Peer] = []
    private var server: StreamListener?

    /// Leader side: accepts helpers on 127.0.0.1:`port`; `changed` runs after every line.
    init(loop: EventLoop, listenPort port: Int, changed: @escaping () -> Void, failed: @escaping (String) -> Void) throws(UVError) {
        server = try StreamListener.tcp(loop: loop, host: "127.0.0.1", port: port, backlog: 16) { [unowned self] connection in
            let peer = Peer(connection: connection)
            self.peers.append(peer)
            connection.onRead = { [unowned peer] bytes in
                peer.scanner.append(bytes)
                while let line = peer.scanner.next() {
                    let parts = line.split(separator: " ").map(String.init)
                    switch parts.first {
                    case "S":
                        peer.watchers = Int(parts[1]) ?? 0
                        peer.pid = parts.count > 2 ? Int32(parts[2]) : nil
                        peer.subscribed = true
                    case "R":
                        let k = Int(parts[1]) ?? 0
                        peer.reached = max(peer.reached, k)
                        peer.reachedAt[k] = UInt64(parts[2]) ?? 0
                    case "L":
                        let n = parts.dropFirst().map { Int($0) ?? 0 }
                        if n.count == 4 { peer.tally = (n[0], n[1], n[2], n[3]) }
                    default: break
                    }
                }
                changed()
            }
            connection.onEnd = { end in if peer.tally == nil { failed("a helper went away: \(end)") } }
            connection.startReading()
        }
    }

    var helpersSubscribed: Int { peers.filter(\.subscribed).count }
    var watchers: Int { peers.reduce(0) { $0 + $1.watchers } }
    var pids: [Int32] { peers.compactMap(\.pid) }

    /// True when every helper's watchers hold `target` events; the latest time they did.
    func reached(_ target: Int) -> (Bool, UInt64) {
        var latest: UInt64 = 0
        for peer in peers {
            guard peer.reached >= target, let at = peer.reachedAt[target] else { return (false, 0) }
            latest = max(latest, at)
        }
        return (true, latest)
    }

    /// Forgets reach times below `target` (memory stays flat over long runs).
    func forget(below target: Int) {
        for peer in peers { peer.reachedAt = peer.reachedAt.filter { $0.key >= target } }
    }

    func askTallies(changes: Int) {
        for peer in peers { peer.connection.write([Array("D \(changes)\n".utf8)]) }
    }

    var talliesIn: Bool { peers.allSatisfy { $0.tally != nil } }

    func close() {
        server?.close()
        for peer in peers { peer.connection.close() }
    }
}

/// Helper side: counts, per event count, how many watchers hold it, and
/// reports to the leader when all do.
final class HelperReporter {
    private let connection: StreamConnection
    private var scanner = LineBuffer()
    private var holding: [Int: Int] = [:]
    private let watchers: Int
    var onTallyRequest: ((Int) -> Void)?

    init(connection: StreamConnection, watchers: Int) {
        self.connection = connection
        self.watchers = watchers
        connection.onRead = { [unowned self] bytes in
            self.scanner.append(bytes)
            while let line = self.scanner.next() {
                if line.hasPrefix("D ") { self.onTallyRequest?(Int(line.dropFirst(2)) ?? 0) }
            }
        }
        connection.startReading()
    }

    func subscribed() { connection.write([Array("S \(watchers) \(getpid())\n".utf8)]) }

    /// One watcher now holds `count` events.
    func watcherHolds(_ count: Int) {
        let now = (holding[count] ?? 0) + 1
        if now == watchers {
            holding[count] = nil
            connection.write([Array("R \(count) \(ProcStats.nowNanoseconds())\n".utf8)])
        } else {
            holding[count] = now
        }
    }

    func tally(lost: Int, extra: Int, errors: Int, resyncs: Int) {
        connection.write([Array("L \(lost) \(extra) \(errors) \(resyncs)\n".utf8)])
    }
}

/// Whole lines from a byte stream (the control link carries few, short lines).
struct LineBuffer {
    private var bytes: [UInt8] = []

    mutating func append(_ chunk: UnsafeRawBufferPointer) { bytes.append(contentsOf: chunk) }

    mutating func next() -> String? {
        guard let end = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let line = String(decoding: bytes[..<end], as: UTF8.self)
        bytes.removeSubrange(...end)
        return line
    }
}
