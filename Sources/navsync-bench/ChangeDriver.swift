import UVLoop

/// The one connection that changes rooms for the restart and history modes:
/// `JOIN bench-R` then `OPEN <route>` lines, pipelined with a bounded number
/// of replies outstanding, and each room's revision taken from its `OK`s.
/// The routes look like an app's: a stack of two or three screens, ids in
/// the data, sometimes a sheet (`ChangeDriver.route`).
final class ChangeDriver {
    let loop: EventLoop
    let host: String
    let port: Int
    /// Each room's revision as of the last `OK` read.
    private(set) var revisions: [UInt64]
    /// Bytes of the `EVENT` lines the changes made (what the history holds), and how many.
    private(set) var eventBytes = 0
    private(set) var eventCount = 0

    private var connection: StreamConnection?
    private var lines = LineCollector()
    /// Per reply outstanding: the room of an `OPEN` (expects `OK`), or -1 for a `JOIN` (expects `STATE`).
    private var outstanding: [Int] = []
    private var outstandingHead = 0
    private var plan: (rooms: Int, perRoom: Int, room: Int, done: Int) = (0, 0, 0, 0)
    private var sequence = 0
    private var finished: (() -> Void)?
    private let fail: (String) -> Void
    private let timer: LoopTimer
    /// The daemon going away is expected while it is being restarted.
    var expectingEnd = false

    private static let window = 4096

    init(loop: EventLoop, host: String, port: Int, rooms: Int, fail: @escaping (String) -> Void) {
        self.loop = loop
        self.host = host
        self.port = port
        self.revisions = Array(repeating: 0, count: rooms)
        self.fail = fail
        self.timer = LoopTimer(loop: loop)
    }

    static func roomName(_ index: Int) -> String { "bench-\(index)" }

    /// A route as an app would open it. Every one carries `sequence`, so no
    /// two are alike: an `OPEN` of the route a room already shows would
    /// change nothing (no revision, no event).
    static func route(room: Int, sequence: Int) -> String {
        switch sequence % 4 {
        case 0: return "/red/green/blue:order-\(sequence)"
        case 1: return "/red/blue:item-\(room)-\(sequence)/green"
        case 2: return "/red/green/blue:cart-\(sequence)#blue:confirm%20payment"
        default: return "/red/green#blue:note-\(sequence)"
        }
    }

    /// Connects, retrying every 5 ms while the daemon is still starting
    /// (for at most `withinSeconds`); `connected` runs once it is in.
    func connect(withinSeconds: Double = 60, _ connected: @escaping () -> Void) {
        Self.connectRetrying(loop: loop, host: host, port: port, timer: timer, withinSeconds: withinSeconds) { [unowned self] outcome in
            switch outcome {
            case .success(let connection):
                self.adopt(connection)
                connected()
            case .failure(let error):
                self.fail(error.description)
            }
        }
    }

    /// A TCP connection to a server that may still be starting: retried
    /// every 5 ms on `timer` until it succeeds or `withinSeconds` have passed.
    static func connectRetrying(loop: EventLoop, host: String, port: Int, timer: LoopTimer, withinSeconds: Double,
                                _ completion: @escaping (Result<StreamConnection, BenchError>) -> Void) {
        let deadline = ProcStats.nowNanoseconds() + UInt64(withinSeconds * 1e9)
        func attempt() {
            StreamConnection.connectTCP(loop: loop, host: host, port: port) { outcome in
                switch outcome {
                case .success(let connection):
                    completion(.success(connection))
                case .failure(let error):
                    guard ProcStats.nowNanoseconds() < deadline else {
                        completion(.failure(BenchError(description: "cannot connect to \(host):\(port): \(error)")))
                        return
                    }
                    timer.start(afterMilliseconds: 5) { attempt() }
                }
            }
        }
        attempt()
    }

    private func adopt(_ connection: StreamConnection) {
        self.connection = connection
        expectingEnd = false
        connection.setNoDelay(true)
        connection.onRead = { [unowned self] bytes in self.read(bytes) }
        connection.onEnd = { [unowned self] end in
            if !self.expectingEnd { self.fail("the daemon closed the actor's connection: \(end)") }
        }
        connection.startReading()
    }

    /// `perRoom` changes to each of the first `rooms` rooms, room by room;
    /// `done` runs when every one is acknowledged.
    func makeChanges(rooms: Int, perRoom: Int, _ done: @escaping () -> Void) {
        // No changes asked for: nothing to send or wait for.
        plan = (perRoom > 0 ? rooms : 0, perRoom, 0, 0)
        finished = done
        sendMore()
    }

    private func sendMore() {
        var bytes: [UInt8] = []
        while outstanding.count - outstandingHead < Self.window && plan.room < plan.rooms {
            if plan.done == 0 {
                bytes += Array("JOIN \(Self.roomName(plan.room))\n".utf8)
                outstanding.append(-1)
            }
            sequence += 1
            let route = Self.route(room: plan.room, sequence: sequence)
            bytes += Array("OPEN \(route)\n".utf8)
            outstanding.append(plan.room)
            plan.done += 1
            if plan.done == plan.perRoom {
                plan.room += 1
                plan.done = 0
            }
        }
        if !bytes.isEmpty { connection?.write([bytes]) }
        if outstandingHead == outstanding.count && plan.room >= plan.rooms, let done = finished {
            finished = nil
            outstanding.removeAll()
            outstandingHead = 0
            done()
        }
    }

    private func read(_ bytes: UnsafeRawBufferPointer) {
        var failure: String?
        lines.scan(bytes) { line in
            guard failure == nil else { return }
            let reply = ServerReply(line: line)
            guard outstandingHead < outstanding.count else {
                if reply != .other { failure = "a reply nobody asked for: \(String(decoding: line, as: UTF8.self))" }
                return
            }
            let room = outstanding[outstandingHead]
            switch (room, reply) {
            case (-1, .state):
                outstandingHead += 1
            case (0..., .ok(let revision)):
                outstandingHead += 1
                revisions[room] = revision
                // The EVENT line the daemon made of it (the OK does not carry the route).
                acknowledgedSequence += 1
                eventBytes += "EVENT \(revision) open \(Self.route(room: room, sequence: acknowledgedSequence))\n".utf8.count
                eventCount += 1
            default:
                failure = "unexpected reply: \(String(decoding: line, as: UTF8.self))"
            }
        }
        if let failure {
            fail(failure)
            return
        }
        if outstandingHead > 65536 {
            outstanding.removeFirst(outstandingHead)
            outstandingHead = 0
        }
        if outstanding.count - outstandingHead < Self.window / 2 || outstandingHead == outstanding.count { sendMore() }
    }

    /// Changes acknowledged so far: they are answered in the order they were
    /// sent, so this is also the sequence number the route was made from.
    private var acknowledgedSequence = 0

    /// Expects the daemon to go away (it is being stopped) and forgets the connection.
    func dropConnection() {
        expectingEnd = true
        connection?.close()
        connection = nil
        lines = LineCollector()
    }
}
