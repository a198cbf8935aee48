import RedisClient
import RedisServerHarness
import UVLoop
import XCTest

/// The hiredis-backed connection against a real redis-server of the test's own.
final class RedisConnectionTests: XCTestCase {
    private func connect(_ loop: EventLoop, _ redis: RedisServerProcess, timeout: UInt64 = 5_000,
                         onGone: @escaping (String) -> Void = { _ in }) throws -> RedisConnection {
        var ready = false
        let connection = RedisConnection(loop: loop, endpoint: RedisEndpoint(url: redis.url)!,
                                         replyTimeoutMilliseconds: timeout,
                                         onReady: { ready = true }, onGone: onGone)
        loop.runUntil { ready }
        XCTAssertTrue(ready, "connected")
        return connection
    }

    func test_connection_pipelinedCommands_answeredInOrder() throws {
        let redis = try RedisServerProcess()
        defer { redis.remove() }
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let connection = try connect(loop, redis)
        var answers: [RedisReply?] = []
        for i in 0..<200 {
            XCTAssertTrue(connection.send(["INCR", "counter"]) { answers.append($0) }, "sent \(i)")
        }
        connection.send(["GET", "counter"]) { answers.append($0) }
        connection.send(["NO-SUCH-COMMAND"]) { answers.append($0) }
        connection.send(["SET", "bytes", "a\u{0}b\r\nc"]) { answers.append($0) }
        connection.send(["GET", "bytes"]) { answers.append($0) }
        loop.runUntil { answers.count == 204 }
        XCTAssertEqual(answers.prefix(200).map { $0?.unsigned }, (1...200).map { UInt64($0) })
        XCTAssertEqual(answers[200], .string(Array("200".utf8)))
        XCTAssertTrue(answers[201]?.errorText?.hasPrefix("ERR unknown command") == true, "\(String(describing: answers[201]))")
        XCTAssertEqual(answers[202], .status("OK"))
        XCTAssertEqual(answers[203], .string(Array("a\u{0}b\r\nc".utf8)), "binary-safe arguments and replies")
        connection.close()
    }

    func test_subscriber_receivesPublishedMessages_inOrder() throws {
        let redis = try RedisServerProcess()
        defer { redis.remove() }
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let publisher = try connect(loop, redis)
        let subscriber = try connect(loop, redis)
        var pushes: [RedisReply] = []
        XCTAssertTrue(subscriber.subscribe(["fleet:a", "fleet:b"]) { pushes.append($0) })
        loop.runUntil { pushes.count == 2 }
        XCTAssertEqual(pushes.first?.elements?.first?.text, "subscribe")
        var published = 0
        for i in 0..<50 { publisher.send(["PUBLISH", i % 2 == 0 ? "fleet:a" : "fleet:b", "m\(i)"]) { _ in published += 1 } }
        loop.runUntil { pushes.count == 52 }
        let messages = pushes.dropFirst(2).compactMap { $0.elements?[2].text }
        XCTAssertEqual(messages, (0..<50).map { "m\($0)" })
        publisher.close()
        subscriber.close()
    }

    func test_connection_redisKilled_pendingGetNil_onGoneOnce() throws {
        let redis = try RedisServerProcess()
        defer { redis.remove() }
        let loop = try EventLoop()
        defer { loop.shutdown() }
        var gone: [String] = []
        let connection = try connect(loop, redis) { gone.append($0) }
        var answers: [RedisReply?] = []
        redis.kill9()
        for _ in 0..<3 { connection.send(["PING"]) { answers.append($0) } }
        loop.runUntil { !gone.isEmpty }
        XCTAssertEqual(answers.count, 3)
        XCTAssertTrue(answers.allSatisfy { $0 == nil }, "\(answers)")
        XCTAssertEqual(gone.count, 1)
        XCTAssertFalse(connection.isConnected)
        XCTAssertFalse(connection.send(["PING"]) { _ in XCTFail("never called") })
    }

    func test_connection_nobodyListening_reportsGone_withReason() throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        var gone: String?
        var ready = false
        let port = LoopbackPortReservation.heldClosedPort()
        let connection = RedisConnection(loop: loop, endpoint: .tcp(host: "127.0.0.1", port: port, database: 0),
                                         onReady: { ready = true }, onGone: { gone = $0 })
        loop.runUntil { gone != nil }
        XCTAssertFalse(ready)
        XCTAssertNotNil(gone)
        XCTAssertTrue(gone?.lowercased().contains("refused") == true, gone ?? "")
        let missing = RedisConnection(loop: loop, endpoint: .unix(path: "/nonexistent/redis.sock", database: 0),
                                      onReady: { ready = true }, onGone: { gone = "unix: " + $0 })
        loop.runUntil { gone?.hasPrefix("unix: ") == true }
        XCTAssertTrue(gone?.hasPrefix("unix: ") == true, gone ?? "")
        connection.close()
        missing.close()
    }

    func test_connection_redisThatStopsAnswering_isDropped_afterTheTimeout() throws {
        let redis = try RedisServerProcess()
        defer { redis.remove() }
        let loop = try EventLoop()
        defer { loop.shutdown() }
        var gone: String?
        let connection = try connect(loop, redis, timeout: 200) { gone = $0 }
        var answers: [RedisReply?] = []
        _ = try redis.cli(["CLIENT", "PAUSE", "1000", "ALL"])
        connection.send(["GET", "x"]) { answers.append($0) }
        loop.runUntil { gone != nil }
        XCTAssertEqual(gone, "no reply within 200 ms")
        XCTAssertEqual(answers.count, 1)
        XCTAssertNil(answers.first ?? .null)
        _ = try? redis.cli(["CLIENT", "UNPAUSE"])
    }

    func test_connection_selectsTheDatabaseOfTheURL() throws {
        let redis = try RedisServerProcess()
        defer { redis.remove() }
        let loop = try EventLoop()
        defer { loop.shutdown() }
        var ready = false
        let connection = RedisConnection(loop: loop, endpoint: RedisEndpoint(url: redis.url + "/5")!,
                                         onReady: { ready = true }, onGone: { _ in })
        loop.runUntil { ready }
        var done = false
        connection.send(["SET", "where", "five"]) { _ in done = true }
        loop.runUntil { done }
        XCTAssertEqual(try redis.cli(["-n", "5", "GET", "where"]), "five\n")
        XCTAssertEqual(try redis.cli(["GET", "where"]), "\n")
        connection.close()
    }
}
