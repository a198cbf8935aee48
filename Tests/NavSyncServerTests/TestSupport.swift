import XCTest
import NavSyncCore
@testable import NavSyncServer

/// A connection that does no IO: it records what the server hands it, and the
/// test decides how much of it the "transport" still holds.
final class MemoryConnection: Connection {
    /// Every `write` call, each a batch of chunks, in order.
    private(set) var writes: [[[UInt8]]] = []
    /// Set by the test to play a transport that has not sent everything yet.
    var queuedWriteBytes = 0
    /// Every call the server made, in order: write, pause, resume, close, closeAfterSending.
    private(set) var calls: [String] = []
    var peerDescription = "memory"
    var peerAddress = PeerAddress.local
    /// How many lines of `lines` a test has already looked at.
    private var linesTaken = 0

    /// Set by the test to play a peer that reads nothing: every write then
    /// stays queued in the "transport".
    var holdsWrites = false

    /// Set by the test to play a socket with this many bytes of room left:
    /// it takes that much, then what is written stays queued (nil: it takes
    /// everything, unless `holdsWrites`).
    var socketRoom: Int?

    /// How much of `count` new bytes the "socket" takes at once.
    private func takeAtOnce(_ count: Int) -> Int {
        guard !holdsWrites, queuedWriteBytes == 0 else { return 0 }
        let taken = min(count, socketRoom ?? count)
        socketRoom = socketRoom.map { $0 - taken }
        return taken
    }

    func write(_ chunks: [[UInt8]]) {
        writes.append(chunks)
        calls.append("write")
        let count = chunks.reduce(0) { $0 + $1.count }
        if holdsWrites || socketRoom != nil { queuedWriteBytes += count - takeAtOnce(count) }
    }

    /// Every shared buffer handed to `write(shared:)`, in order (each is in `writes` too, as a copy).
    private(set) var sharedWrites: [SharedBytes] = []

    /// Set by the test to play a transport that keeps a reference to a
    /// shared buffer it holds (as the libuv stream does) instead of a copy:
    /// the buffer is charged to its ledger once, whoever else holds it.
    var keepsSharedBuffers = false
    /// The shared buffers this "transport" holds while they are unsent.
    private var heldShared: [SharedBytes] = []

    func write(shared bytes: SharedBytes) {
        sharedWrites.append(bytes)
        write([bytes.array])
        if keepsSharedBuffers && queuedWriteBytes > 0 {
            bytes.queuedWriteStarted()
            heldShared.append(bytes)
        }
    }

    var queuedOwnMemory: Int { max(0, queuedWriteBytes - heldShared.reduce(0) { $0 + $1.count }) }

    /// The "socket" sent everything: shared buffers held are let go.
    func drainEverything() {
        queuedWriteBytes = 0
        holdsWrites = false
        for bytes in heldShared { bytes.queuedWriteEnded() }
        heldShared.removeAll()
    }

    func writeWithoutQueuing(_ chunks: [[UInt8]]) -> Int {
        let all = Array(chunks.joined())
        let taken = takeAtOnce(all.count)
        if taken > 0 {
            writes.append([Array(all.prefix(taken))])
            calls.append("write")
        }
        return taken
    }

    func pauseReading() { calls.append("pause") }
    func resumeReading() { calls.append("resume") }
    func close() { calls.append("close") }
    func closeAfterSending() { calls.append("closeAfterSending") }

    func count(_ call: String) -> Int { calls.filter { $0 == call }.count }

    var isClosed: Bool { calls.contains("close") || calls.contains("closeAfterSending") }

    /// Everything written so far, as one text.
    var text: String { String(decoding: writes.joined().joined(), as: UTF8.self) }

    /// Every complete line written so far, without its `\n`.
    var lines: [String] {
        var all = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if all.last == "" { all.removeLast() }
        return all
    }

    /// The lines written since the last call.
    @discardableResult
    func newLines() -> [String] {
        let all = lines
        defer { linesTaken = all.count }
        return Array(all[linesTaken...])
    }
}

/// A state file in memory. An append is all or nothing, like the real one;
/// each operation can be told to fail.
final class MemoryStorage: JournalStorage {
    struct InjectedFailure: Error, CustomStringConvertible {
        var operation: String
        var description: String { "injected \(operation) failure" }
    }

    var bytes: [UInt8]?
    var failAppend = false
    var failSync = false
    var failReplace = false
    private(set) var appends = 0
    private(set) var syncs = 0
    private(set) var replaces = 0
    /// Called after a successful append, with the appended bytes.
    var onAppend: (([UInt8]) -> Void)?

    init(bytes: [UInt8]? = nil) { self.bytes = bytes }

    func readAll() throws -> [UInt8]? { bytes }

    func replace(with bytes: [UInt8]) throws {
        if failReplace { throw InjectedFailure(operation: "replace") }
        replaces += 1
        self.bytes = bytes
    }

    func append(_ more: [UInt8]) throws {
        if failAppend { throw InjectedFailure(operation: "append") }
        appends += 1
        if bytes == nil { bytes = [] }
        bytes!.append(contentsOf: more)
        onAppend?(more)
    }

    func sync() throws {
        if failSync { throw InjectedFailure(operation: "sync") }
        syncs += 1
    }

    var size: Int { bytes?.count ?? 0 }
    let name = "memory.journal"

    var text: String { String(decoding: bytes ?? [], as: UTF8.self) }
    var lines: [String] { text.split(separator: "\n").map(String.init) }
}

/// One client of a `Hub`: its in-memory connection and its server session.
final class Client {
    let connection: MemoryConnection
    let session: Session
    // Strong: a test may keep only its clients; the hub holds no clients back.
    private let hub: Hub

    init(hub: Hub, connection: MemoryConnection, session: Session) {
        self.hub = hub
        self.connection = connection
        self.session = session
    }

    /// Sends one or more lines (a `\n` is added to each) without flushing.
    func send(_ lines: String...) {
        for line in lines {
            hub.server.receive(Array((line + "\n").utf8), from: session)
        }
    }

    /// Sends raw bytes, without flushing.
    func sendRaw(_ text: String) {
        hub.server.receive(Array(text.utf8), from: session)
    }

    /// Sends the lines, ends the loop turn, and returns the lines this client
    /// received since it last looked.
    @discardableResult
    func run(_ lines: String...) -> [String] {
        for line in lines {
            hub.server.receive(Array((line + "\n").utf8), from: session)
        }
        hub.server.flush()
        return connection.newLines()
    }

    /// Lines received since the last look.
    @discardableResult
    func newLines() -> [String] { connection.newLines() }

    func inputEnded() { hub.server.inputEnded(session) }
    func transportFailed(_ what: String = "ECONNRESET") { hub.server.transportFailed(session, what) }
    func writeQueueDrained() { hub.server.writeQueueDrained(session) }

    /// The `STAT` figures as a dictionary (clears this client's new lines).
    func stats() -> [String: String] {
        var figures: [String: String] = [:]
        for line in run("STATS") where line.hasPrefix("STAT ") {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            figures[parts[1]] = parts.count > 2 ? parts[2] : ""
        }
        return figures
    }
}

/// A server wired to in-memory connections and, optionally, an in-memory
/// journal. No sockets, no loop: the test plays the loop by calling `flush`.
final class Hub {
    let server: Server
    let storage: MemoryStorage?
    let journal: Journal?
    var clock: UInt64 = 0
    private(set) var logLines: [(LogLevel, String)] = []

    init(limits: Limits = Limits(), token: String? = nil, catalog: Catalog = .builtIn,
         rooms: [String: RoomState] = [:], persistence: Journal.SyncPolicy? = nil,
         storage: MemoryStorage? = nil, store: RoomStore? = nil,
         grants: [GrantsFile.Entry] = [], anonymous: Role? = nil) throws {
        var journal: Journal?
        var usedStorage: MemoryStorage?
        if let persistence {
            let store = storage ?? MemoryStorage()
            journal = try Journal(storage: store, policy: persistence, rooms: rooms)
            usedStorage = store
        }
        self.storage = usedStorage
        self.journal = journal
        var capture: ((LogLevel, String) -> Void)?
        let log = Logger(level: .debug) { level, message in capture?(level, message) }
        var clockReader: (() -> UInt64)?
        let config = ServerConfig(version: "9.9.9-test", limits: limits, token: token, grants: grants, anonymous: anonymous)
        if let store {
            server = Server(config: config, catalog: catalog, rooms: rooms, store: store, log: log,
                            secondsSinceStart: { clockReader?() ?? 0 })
        } else {
            server = Server(config: config, catalog: catalog, rooms: rooms, journal: journal, log: log,
                            secondsSinceStart: { clockReader?() ?? 0 })
        }
        capture = { [unowned self] level, message in self.logLines.append((level, message)) }
        clockReader = { [unowned self] in self.clock }
    }

    func connect(peer: String = "memory", address: PeerAddress = .local) -> Client {
        let connection = MemoryConnection()
        connection.peerDescription = peer
        connection.peerAddress = address
        let session = server.accept(connection)
        return Client(hub: self, connection: connection, session: session)
    }

    func flush() { server.flush() }

    func logged(_ fragment: String) -> Bool { logLines.contains { $0.1.contains(fragment) } }
}

/// The A → B → C flow from the protocol's example file.
let flowCatalog: Catalog = try! Catalog(initial: "viewA", screens: [
    Screen(name: "viewA", title: "View A", color: .cyan, message: "Start here", next: "viewB"),
    Screen(name: "viewB", title: "View B", color: .magenta, message: "Got data from A", next: "viewC", data: .required),
    Screen(name: "viewC", title: "View C", color: .yellow, message: "Last stop", next: "viewA"),
])

func stack(_ route: String) -> [RouteEntry] {
    navigation(route).stack
}

/// Stack and sheets from a route such as `/red#blue`; the route must be well-formed.
func navigation(_ route: String) -> Navigation {
    switch Route.decode(route) {
    case .success(let navigation): return navigation
    case .failure(let error): fatalError("test route \(route) does not decode: \(error)")
    }
}

func limits(maxPending: Int? = nil, maxDepth: Int? = nil, maxRooms: Int? = nil,
            maxClients: Int? = nil, maxLine: Int? = nil) -> Limits {
    var limits = Limits()
    if let maxPending { limits.maxPendingBytes = maxPending }
    if let maxDepth { limits.maxDepth = maxDepth }
    if let maxRooms { limits.maxRooms = maxRooms }
    if let maxClients { limits.maxClients = maxClients }
    if let maxLine { limits.maxLineBytes = maxLine }
    return limits
}
