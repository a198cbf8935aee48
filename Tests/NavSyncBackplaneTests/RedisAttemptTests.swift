import XCTest
import RedisClient
@testable import NavSyncBackplane

/// One attempt's pair of links on scripted links: which callbacks reach the
/// store before and after the attempt is given up.
final class RedisAttemptTests: XCTestCase {
    private let redis = ScriptedRedis()
    private var readyCount = 0
    private var losses: [String] = []

    private func makeAttempt() -> RedisAttempt {
        RedisAttempt(connector: redis.connector,
                     onBothReady: { [unowned self] _ in readyCount += 1 },
                     onLost: { [unowned self] _, reason in losses.append(reason) })
    }

    func test_attempt_readyOnlyOnceBothLinksConnect() {
        let attempt = makeAttempt()
        redis.commands.becomeReady()
        XCTAssertEqual(readyCount, 0, "the subscriber is not connected yet")
        redis.subscriber.becomeReady()
        XCTAssertEqual(readyCount, 1)
        XCTAssertTrue(attempt.isCurrent)
    }

    func test_attempt_askDeliversWhileCurrent() {
        let attempt = makeAttempt()
        redis.commands.becomeReady()
        var replies: [String?] = []
        attempt.ask(["GET", "k"]) { replies.append($0?.text) }
        redis.commands.answer(.string(Array("v".utf8)))
        XCTAssertEqual(replies, ["v"])
    }

    func test_attempt_retiredDropsAskedAnswersButRoundsHearNil() {
        let attempt = makeAttempt()
        redis.commands.becomeReady()
        redis.subscriber.becomeReady()
        var asked: [String] = []
        var roundReplies: [RedisReply?] = []
        attempt.ask(["GET", "epoch"]) { asked.append($0?.text ?? "nil") }
        attempt.commandLink?.send(["FCALL", "change"]) { roundReplies.append($0) }
        attempt.retire()
        XCTAssertEqual(asked, [], "a handshake answer of a given-up attempt acts on nothing, not even as a nil")
        XCTAssertEqual(roundReplies.count, 1, "a change round in flight is answered (nil) so its clients hear unavailable")
        XCTAssertNil(roundReplies[0] ?? nil)
        XCTAssertNil(attempt.commandLink)
        XCTAssertTrue(redis.commands.isGone && redis.subscriber.isGone)
    }

    func test_attempt_lossOfRetiredLinkIsNotReported() {
        let first = makeAttempt()
        let oldCommands = redis.commands
        oldCommands.becomeReady()
        first.retire()
        let second = makeAttempt()
        oldCommands.lose("late reset")
        XCTAssertEqual(losses, [], "a failure of the old connection must not take the new one down")
        redis.commands.lose("refused")
        XCTAssertEqual(losses, ["refused"])
        XCTAssertTrue(second.isCurrent)
    }

    func test_attempt_pushesStopAtRetirement() {
        let attempt = makeAttempt()
        redis.subscriber.becomeReady()
        var pushes = 0
        attempt.subscribe(["changes"]) { _ in pushes += 1 }
        redis.subscriber.message(channel: "changes", "one")
        attempt.retire()
        redis.subscriber.message(channel: "changes", "two")
        XCTAssertEqual(pushes, 1)
    }

    func test_attempt_readyOfRetiredAttemptDoesNotStartHandshake() {
        let attempt = makeAttempt()
        let (commands, subscriber) = (redis.commands, redis.subscriber)
        commands.becomeReady()
        attempt.retire()
        subscriber.becomeReady()
        XCTAssertEqual(readyCount, 0)
    }
}
