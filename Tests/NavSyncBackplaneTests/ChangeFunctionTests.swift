@testable import NavSyncBackplane
import RedisClient
import RedisServerHarness
import UVLoop
import XCTest

/// The change function itself, loaded into a redis-server of the test's own
/// and called the way the Redis store calls it: a round of changes is
/// applied whole or not at all, and what it stores, appends and publishes
/// is exactly one entry per change, in order.
final class ChangeFunctionTests: XCTestCase {
    private let keys = BackplaneKeys(prefix: "t:")
    private let epoch = "e1"
    private let room = "main"
    private let bounds = ChangeFunction.HistoryBounds(count: 100, bytes: 1 << 20)

    /// Redis, a command connection with the function loaded, and a subscriber on the changes channel.
    private final class Fixture {
        let redis: RedisServerProcess
        let loop: EventLoop
        let commands: RedisConnection
        let subscriber: RedisConnection
        var messages: [String] = []

        init(test: ChangeFunctionTests) throws {
            let redis = try RedisServerProcess()
            let loop = try EventLoop()
            func connect() -> RedisConnection {
                var ready = false
                let connection = RedisConnection(loop: loop, endpoint: RedisEndpoint(url: redis.url)!,
                                                 onReady: { ready = true }, onGone: { _ in })
                loop.runUntil { ready }
                XCTAssertTrue(ready, "connected to redis")
                return connection
            }
            self.redis = redis
            self.loop = loop
            commands = connect()
            subscriber = connect()
            var subscribed = false
            _ = subscriber.subscribe([test.keys.changesChannel]) { [unowned self] push in
                guard let parts = push.elements, parts.first?.text == "message", let text = parts[2].text else {
                    subscribed = true
                    return
                }
                self.messages.append(text)
            }
            loop.runUntil { subscribed }
            let loaded = try XCTUnwrap(send(["FUNCTION", "LOAD", "REPLACE", ChangeFunction.source]))
            XCTAssertEqual(loaded.text, ChangeFunction.library, "\(loaded)")
        }

        func send(_ command: [String]) -> RedisReply? {
            var answer: RedisReply??
            XCTAssertTrue(commands.send(command) { answer = .some($0) })
            loop.runUntil { answer != nil }
            return answer ?? nil
        }

        /// Runs the loop a little longer, so that any message published by now has arrived.
        func settle(_ test: ChangeFunctionTests) {
            _ = send(["PUBLISH", test.keys.changesChannel, "marker"])
            loop.runUntil { self.messages.last == "marker" }
            messages.removeAll { $0 == "marker" }
        }

        deinit {
            commands.close()
            subscriber.close()
            loop.shutdown()
            redis.remove()
        }
    }

    private func steps(_ routes: [String], from first: Int = 1) -> [ChangeFunction.Step] {
        routes.enumerated().map { ChangeFunction.Step(route: $1, op: "push", tag: "d.\(first + $0)") }
    }

    private func round(_ fixture: Fixture, after expected: ChangeFunction.Precondition,
                       _ steps: [ChangeFunction.Step]) -> RedisReply? {
        fixture.send(ChangeFunction.call(keys: keys, epoch: epoch, room: room, expected: expected,
                                               steps: steps, history: bounds))
    }

    private func historyIDs(_ fixture: Fixture) -> [String] {
        fixture.send(["XRANGE", keys.history(room), "-", "+"])?.elements?.compactMap { $0.elements?.first?.text } ?? []
    }

    func test_changeFunction_round_appliesEveryChangeInOrder_oneEntryAndOneMessageEach() throws {
        let fixture = try Fixture(test: self)
        let reply = round(fixture, after: .exactly(0), steps(["A", "A/B", "A/B/C"]))
        XCTAssertEqual(ChangeFunction.Answer(reply), .applied(revision: 3), "\(String(describing: reply))")
        XCTAssertEqual(historyIDs(fixture), ["1-0", "2-0", "3-0"])
        let state = fixture.send(["HMGET", keys.state(room), "rev", "route", "tag"])?.elements?.map(\.text)
        XCTAssertEqual(state, ["3", "A/B/C", "d.3"])
        fixture.settle(self)
        XCTAssertEqual(fixture.messages, ["e1 main 1 d.1 push A", "e1 main 2 d.2 push A/B", "e1 main 3 d.3 push A/B/C"])
        XCTAssertEqual(fixture.messages.compactMap { PublishedChange.parse(Array($0.utf8))?.change.revision }, [1, 2, 3],
                       "what the subscribers parse")

        // The next round is judged against the last change's revision and tag.
        let next = round(fixture, after: ChangeFunction.Precondition(revision: 3, tag: "d.3"), steps(["A/B"], from: 4))
        XCTAssertEqual(ChangeFunction.Answer(next), .applied(revision: 4))
    }

    func test_changeFunction_roundOnAMovedRoom_changesNothing_andSaysWhereTheRoomIs() throws {
        let fixture = try Fixture(test: self)
        _ = round(fixture, after: .exactly(0), steps(["A", "A/B"]))
        fixture.settle(self)
        fixture.messages.removeAll()
        let table: [(String, ChangeFunction.Precondition)] = [
            ("revision behind", ChangeFunction.Precondition(revision: 1, tag: "d.1")),
            ("revision ahead", ChangeFunction.Precondition(revision: 3, tag: "d.2")),
            ("same revision made by another change", ChangeFunction.Precondition(revision: 2, tag: "other.9")),
        ]
        for (why, expected) in table {
            let reply = round(fixture, after: expected, steps(["X", "X/Y"], from: 10))
            XCTAssertEqual(ChangeFunction.Answer(reply), .state(revision: 2, route: "A/B", tag: "d.2", matched: false), why)
        }
        XCTAssertEqual(historyIDs(fixture), ["1-0", "2-0"], "no entry appended")
        XCTAssertEqual(fixture.send(["HGET", keys.state(room), "route"])?.text, "A/B", "state untouched")
        fixture.settle(self)
        XCTAssertEqual(fixture.messages, [], "nothing published")
    }

    func test_changeFunction_noChanges_onlyReportsTheState() throws {
        let fixture = try Fixture(test: self)
        XCTAssertEqual(ChangeFunction.Answer(round(fixture, after: .exactly(0), [])),
                       .state(revision: 0, route: "", tag: "", matched: true), "a room never changed")
        _ = round(fixture, after: .exactly(0), steps(["A"]))
        XCTAssertEqual(ChangeFunction.Answer(round(fixture, after: .exactly(1), [])),
                       .state(revision: 1, route: "A", tag: "d.1", matched: true))
        XCTAssertEqual(ChangeFunction.Answer(round(fixture, after: .exactly(0), [])),
                       .state(revision: 1, route: "A", tag: "d.1", matched: false))
        XCTAssertEqual(historyIDs(fixture), ["1-0"], "a report appends nothing")
    }

    func test_changeFunction_historyAheadOfState_failsTheWholeRound_leavingNothingChanged() throws {
        // A history entry the state does not know of (written by hand here):
        // the round's first entry cannot go in, and neither may the rest.
        let fixture = try Fixture(test: self)
        _ = fixture.send(["XADD", keys.history(room), "5-0", "op", "push", "route", "Z", "tag", "x"])
        let reply = round(fixture, after: .exactly(0), steps(["A", "A/B", "A/B/C"]))
        XCTAssertNotNil(reply?.errorText, "\(String(describing: reply))")
        XCTAssertNil(ChangeFunction.Answer(reply))
        XCTAssertEqual(historyIDs(fixture), ["5-0"])
        XCTAssertEqual(fixture.send(["EXISTS", keys.state(room)])?.unsigned, 0, "no state stored")
        fixture.settle(self)
        XCTAssertEqual(fixture.messages, [], "nothing published")
    }

    func test_changeFunction_history_trimmedToItsBound_newestKept() throws {
        let fixture = try Fixture(test: self)
        let small = ChangeFunction.HistoryBounds(count: 16, bytes: 1 << 20)
        var tag = "*"
        for revision in 0..<40 {
            let call = ChangeFunction.call(keys: keys, epoch: epoch, room: room,
                                           expected: ChangeFunction.Precondition(revision: UInt64(revision), tag: tag),
                                           steps: steps(["A"], from: revision + 1), history: small)
            XCTAssertEqual(ChangeFunction.Answer(fixture.send(call)), .applied(revision: UInt64(revision + 1)))
            tag = "d.\(revision + 1)"
        }
        let ids = historyIDs(fixture)
        XCTAssertLessThanOrEqual(ids.count, 16 + 1, "within the bound and its 1/16 slack")
        XCTAssertEqual(ids.last, "40-0")
    }
}
