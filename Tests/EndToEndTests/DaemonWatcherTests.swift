import NavSyncCore
import Foundation
import XCTest

/// Watchers under load: several writers at once, and a watcher that stops
/// reading.
final class DaemonWatcherTests: XCTestCase {
    /// One parsed `EVENT <rev> <op> <route>` line.
    struct Event: Equatable {
        var revision: UInt64
        var op: String
        var route: String

        init?(_ line: String) {
            let parts = line.split(separator: " ", omittingEmptySubsequences: false)
            guard parts.count == 4, parts[0] == "EVENT", let revision = UInt64(parts[1]) else { return nil }
            self.revision = revision
            op = String(parts[2])
            route = String(parts[3])
        }
    }

    /// Reads `client`'s lines on a thread of its own into `lines` until it
    /// has seen revision `target` (set later by the test), or 40 s pass.
    static func startReading(_ client: LineClient, into lines: Locked<[String]>, until target: Locked<UInt64?>,
                             group: DispatchGroup) {
        group.enter()
        Thread {
            defer { group.leave() }
            readLoop(client, into: lines, until: target)
        }.start()
    }

    static func readLoop(_ client: LineClient, into lines: Locked<[String]>, until target: Locked<UInt64?>,
                         from start: UInt64 = 0) {
        var last = start
        // Bounded by silence, not by the whole run: the writer may take
        // longer than any fixed window on a loaded machine (or a debug
        // build), and a reader that gave up early would look like lost events.
        let silence: TimeInterval = 40
        var deadline = Date().addingTimeInterval(silence)
        while Date() < deadline {
            if let target = target.current, last >= target { return }
            guard let line = try? client.readLine(timeout: 0.1) else { continue }
            deadline = Date().addingTimeInterval(silence)
            lines.withLock { $0.append(line) }
            let parts = line.split(separator: " ")
            if parts.count >= 2, parts[0] == "EVENT" || parts[0] == "STATE", let revision = UInt64(parts[1]) {
                last = revision
            }
        }
    }

    /// One random mutation of the built-in catalog, valid or not for the
    /// current state (errors such as at-root are part of the mix).
    static func randomCommand(_ random: inout SplitMix64) -> String {
        let screens = ["red", "green", "blue"]
        let data = ["", "x", "hello world", "h\u{E9}/llo:%+", "\u{65E5}\u{672C}", "a\tb", "100%"]
        func dataFor(_ screen: String) -> String {
            screen == "blue" ? (data.randomElement(using: &random) ?? "") : ""
        }
        switch Int.random(in: 0..<10, using: &random) {
        case 0, 1:
            let screen = screens.randomElement(using: &random)!
            return "SELECT \(screen) \(dataFor(screen))"
        case 2, 3:
            let screen = screens.randomElement(using: &random)!
            return "PUSH \(screen) \(dataFor(screen))"
        case 4:
            return "POP"
        case 5:
            return Bool.random(using: &random) ? "ROOT" : "IF \(Int.random(in: 0..<400, using: &random)) POP"
        case 6, 7:
            return Bool.random(using: &random) ? "NEXT" : "NEXT \(data.randomElement(using: &random)!)"
        default:
            let depth = Int.random(in: 1...4, using: &random)
            let route = (0..<depth).map { _ -> String in
                let screen = screens.randomElement(using: &random)!
                let value = dataFor(screen)
                return value.isEmpty ? "/\(screen)" : "/\(screen):\(percentEncode(value))"
            }.joined()
            return "OPEN \(route)"
        }
    }

    static func percentEncode(_ text: String) -> String {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        return text.utf8.map { unreserved.contains($0) ? String(UnicodeScalar($0)) : String(format: "%%%02X", $0) }
            .joined()
    }

    func test_watchers_concurrentActors_identicalGapFreeStreamsEndingAtGet() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // With a state file, so every change also goes through the journal.
        let daemon = try DaemonProcess(state: dir.file("state.json"))
        defer { daemon.stop() }
        let watcherCount = 4, actorCount = 4, commandsPerActor = 250
        let watchers = try (0..<watcherCount).map { _ in try daemon.connect() }
        for watcher in watchers { XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red") }

        let streams = (0..<watcherCount).map { _ in Locked([String]()) }
        let finalRevision = Locked<UInt64?>(nil)
        let failures = Locked([String]())
        let acknowledged = Locked([UInt64]())
        let port = daemon.port

        // Watchers read while the actors write; each stops once it has the final revision.
        let readersDone = DispatchGroup()
        for (watcher, stream) in zip(watchers, streams) {
            Self.startReading(watcher, into: stream, until: finalRevision, group: readersDone)
        }

        // One more watcher subscribes while the actors are busy: its snapshot
        // and the events after it must join up with no gap and no overlap.
        let lateLines = Locked([String]())
        readersDone.enter()
        Thread {
            defer { readersDone.leave() }
            guard let late = try? LineClient(port: port) else { return }
            let joined = waitUntil(timeout: 20) {
                let reply = (try? late.request("GET")) ?? ""
                return (reply.split(separator: " ").dropFirst().first.flatMap { UInt64($0) } ?? 0) >= 50
            }
            guard joined, let snapshot = try? late.request("WATCH") else {
                failures.withLock { $0.append("the late watcher could not subscribe") }
                return
            }
            lateLines.withLock { $0.append(snapshot) }
            let snapshotRevision = snapshot.split(separator: " ").dropFirst().first.flatMap { UInt64($0) } ?? 0
            Self.readLoop(late, into: lateLines, until: finalRevision, from: snapshotRevision)
            late.close()
        }.start()

        runOnThreads(actorCount, timeout: 40) { index in
            var random = SplitMix64(seed: 0x5EED_0000 + UInt64(index))
            guard let client = try? LineClient(port: port) else {
                failures.withLock { $0.append("actor \(index) could not connect") }
                return
            }
            var lastAcknowledged: UInt64 = 0
            for _ in 0..<commandsPerActor {
                let command = Self.randomCommand(&random)
                guard let reply = try? client.request(command) else {
                    failures.withLock { $0.append("actor \(index): no reply to \(command)") }
                    return
                }
                if reply.hasPrefix("OK "), let revision = UInt64(reply.dropFirst(3)) {
                    if revision < lastAcknowledged {
                        failures.withLock { $0.append("actor \(index): OK \(revision) after OK \(lastAcknowledged)") }
                    }
                    lastAcknowledged = revision
                    acknowledged.withLock { $0.append(revision) }
                } else if !["ERR at-root ", "ERR bad-args ", "ERR conflict "].contains(where: { reply.hasPrefix($0) }) {
                    failures.withLock { $0.append("actor \(index): \(command) → \(reply)") }
                }
            }
            client.close()
        }

        let reader = try daemon.connect()
        let get = try reader.request("GET")
        let getParts = get.split(separator: " ")
        XCTAssertEqual(getParts.count, 3, get)
        let final = UInt64(getParts[1]) ?? 0
        finalRevision.withLock { $0 = final }
        XCTAssertEqual(readersDone.wait(timeout: .now() + 40), .success)
        XCTAssertEqual(failures.current, [])

        XCTAssertGreaterThan(final, 100, "the actors should have made many changes")
        XCTAssertEqual(acknowledged.current.max(), final, "the last acknowledged revision is the room's")
        let all = streams.map(\.current)
        let first = all[0]
        XCTAssertEqual(first.count, Int(final))
        let events = first.compactMap(Event.init)
        XCTAssertEqual(events.count, first.count, "every line is an EVENT: \(first.filter { Event($0) == nil }.prefix(3))")
        XCTAssertEqual(events.map(\.revision), Array(stride(from: 1, through: final, by: 1)),
                       "revisions strictly consecutive from 1")
        XCTAssertTrue(events.allSatisfy { ["select", "push", "pop", "root", "next", "open"].contains($0.op) })
        XCTAssertEqual(events.last.map { "STATE \($0.revision) \($0.route)" }, get, "the stream ends at GET's route")
        for (index, stream) in all.enumerated().dropFirst() {
            XCTAssertEqual(stream, first, "watcher \(index) saw a different stream")
        }

        let late = lateLines.current
        let snapshot = try XCTUnwrap(late.first).split(separator: " ")
        XCTAssertEqual(snapshot.count, 3, "\(late.first ?? "")")
        let snapshotRevision = try XCTUnwrap(UInt64(snapshot[1]))
        XCTAssertEqual(late.dropFirst().compactMap(Event.init).map(\.revision),
                       Array(stride(from: snapshotRevision + 1, through: final, by: 1)),
                       "the late watcher's events start right after its snapshot")
        XCTAssertEqual(late.dropFirst().count, Int(final - snapshotRevision))
        XCTAssertEqual(events.first { $0.revision == snapshotRevision }?.route, String(snapshot[2]),
                       "the snapshot matches the event of its revision")
        for watcher in watchers { watcher.close() }
        reader.close()
    }

    func test_slowWatcher_boundedMemory_othersGetEverything_resyncThenEventsResume() throws {
        let daemon = try DaemonProcess(arguments: ["--max-pending", "4096"], state: "none")
        defer { daemon.stop() }
        let slow = try daemon.connect(receiveBufferBytes: 4096)
        // A big receive buffer: however the reader thread is scheduled, the
        // daemon never holds more than a line or two for this watcher.
        let fast = try daemon.connect(receiveBufferBytes: 4 << 20)
        let actor = try daemon.connect()
        XCTAssertEqual(try slow.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try fast.request("WATCH"), "STATE 0 /red")
        let fastLines = Locked([String]())
        let target = Locked<UInt64?>(nil)
        let fastDone = DispatchGroup()
        Self.startReading(fast, into: fastLines, until: target, group: fastDone)

        // ~3 KB per event: the slow watcher's kernel buffers fill quickly, and
        // then the daemon must stop queueing for it.
        let filler = String(repeating: "abcdefghij", count: 300)
        var revision: UInt64 = 0
        func change() throws {
            revision += 1
            XCTAssertEqual(try actor.request("SELECT blue \(revision) \(filler)"), "OK \(revision)")
        }
        func resyncs() throws -> Int {
            let stats = try actor.requestList("STATS")
            return stats.first { $0.hasPrefix("STAT resyncs ") }.flatMap { Int($0.split(separator: " ")[2]) } ?? -1
        }
        // Up to ~30 MB of events until the daemon gives up on the slow watcher
        // (it logs that at once; STATS resyncs counts the STATE only once sent).
        func slowWatcherDropped() -> Bool { daemon.log.contains("is a slow watcher") }
        var batches = 0
        while !slowWatcherDropped() && batches < 100 {
            for _ in 0..<100 { try change() }
            batches += 1
        }
        XCTAssertTrue(slowWatcherDropped(), "the slow watcher's events were never dropped after \(revision) changes")
        let rssAtResync = daemon.residentKilobytes ?? 0
        // Another ~6 MB of events the slow watcher does not read.
        for _ in 0..<2000 { try change() }
        let rssAfter = daemon.residentKilobytes ?? 0
        XCTAssertLessThan(rssAfter - rssAtResync, 3 * 1024,
                          "RSS grew from \(rssAtResync) KiB to \(rssAfter) KiB while a watcher did not read")
        let stalledAt = revision

        // The reading watcher got every event.
        target.withLock { $0 = stalledAt }
        XCTAssertEqual(fastDone.wait(timeout: .now() + 40), .success)
        let fastEvents = fastLines.current.compactMap(Event.init)
        XCTAssertEqual(fastEvents.count, fastLines.current.count, "the reading watcher was resynced too")
        XCTAssertEqual(fastEvents.map(\.revision), Array(1...stalledAt))

        // The slow one asks something while it is behind: replies are never dropped.
        slow.send("PING mine 1\nPING mine 2\n")
        // Now it reads: events from before the stall, then one STATE with a jump, and its replies.
        var lastEvent: UInt64 = 0
        var resyncLine: String?
        var pongs: [String] = []
        let deadline = Date().addingTimeInterval(20)
        while (resyncLine == nil || pongs.count < 2) && Date() < deadline {
            let line = try slow.readLine(timeout: 20)
            if let event = Event(line) {
                XCTAssertNil(resyncLine, "an event after the resync but before any new change: \(line.prefix(40))")
                XCTAssertEqual(event.revision, lastEvent + 1, "events before the resync are gap-free")
                lastEvent = event.revision
            } else if line.hasPrefix("PONG ") {
                pongs.append(line)
            } else {
                XCTAssertNil(resyncLine, "a second resync: \(line.prefix(40))")
                resyncLine = line
            }
        }
        XCTAssertEqual(pongs, ["PONG mine 1", "PONG mine 2"])
        let resync = try XCTUnwrap(resyncLine, "no resync STATE line")
        let parts = resync.split(separator: " ")
        XCTAssertEqual(parts.first, "STATE", resync)
        let resyncRevision = try XCTUnwrap(UInt64(parts.dropFirst().first ?? ""), resync)
        XCTAssertGreaterThan(resyncRevision, lastEvent + 1, "the resync shows a revision jump")
        XCTAssertEqual(resyncRevision, stalledAt, "nothing changed since the stall")
        XCTAssertEqual(String(parts.last ?? ""), "/blue:\(stalledAt)%20\(filler)")

        // Events resume for it.
        XCTAssertEqual(try actor.request("SELECT green"), "OK \(stalledAt + 1)")
        XCTAssertEqual(try actor.request("PUSH red"), "OK \(stalledAt + 2)")
        XCTAssertEqual(try slow.readLines(2), ["EVENT \(stalledAt + 1) select /green", "EVENT \(stalledAt + 2) push /green/red"])
        XCTAssertGreaterThanOrEqual(try resyncs(), 1)
        fast.close()
        actor.close()
        slow.close()
    }
}
