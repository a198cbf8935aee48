import NavSyncCore
import NavSyncWeb
import UVLoop
import XCTest

/// `ConnectionDoor` and its `WebExchange` alone: the sniff, keep-alive,
/// pipelining under backpressure, body skip and the head timer, with a fake
/// hub behind the port and an in-memory stream below.
final class ConnectionDoorHTTPTests: XCTestCase {
    private var harness: DoorHarness!

    override func setUpWithError() throws { harness = try DoorHarness() }

    override func tearDown() {
        harness?.tearDown()
        harness = nil
    }

    // MARK: The sniff

    func test_connectionDoor_lineProtocol_firstBytesGoUpUnchanged_andTheDoorStepsAside() {
        harness.stream.peerSends("GE")
        XCTAssertEqual(harness.up, [], "two letters decide nothing")
        harness.stream.peerSends("T red\nPUSH blue\n")
        XCTAssertTrue(harness.door.speaksLineProtocol)
        XCTAssertFalse(harness.door.carriesWeb)
        harness.stream.peerSends("SELECT green\n")
        XCTAssertEqual(harness.upText, "GET red\nPUSH blue\nSELECT green\n")
        harness.door.write([Array("OK 1\n".utf8)])
        XCTAssertEqual(harness.stream.takeWritten(), Array("OK 1\n".utf8), "lines go down unframed")
    }

    func test_connectionDoor_endOfInputWhileJudging_isTheLineProtocolsLastLine() {
        harness.stream.peerSends("GET")
        harness.stream.peerCloses()
        XCTAssertEqual(harness.upText, "GET")
        XCTAssertTrue(harness.door.speaksLineProtocol)
        XCTAssertEqual(harness.endsUp, 1)
    }

    func test_connectionDoor_refusedAtAccept_servesNothing_andPassesTheRefusalDown() {
        harness.hub.sessionEnd = .busy
        harness.door.write([Array("ERR busy too many connections\n".utf8)])
        harness.stream.peerSends(HTTPWire.get("/healthz"))
        XCTAssertEqual(harness.stream.takeWritten(), Array("ERR busy too many connections\n".utf8))
        XCTAssertEqual(harness.up, [])
        XCTAssertEqual(harness.front.requestsTotal, 0)
    }

    // MARK: Keep-alive

    func test_exchange_keepAlive_answersRequestsInTurnOnOneConnection() {
        harness.hub.rooms["main"] = RoomState(stack: [RouteEntry(screen: "home")], revision: 3)
        harness.stream.peerSends(HTTPWire.get("/healthz"))
        harness.stream.peerSends(HTTPWire.get("/rooms/main"))
        let answers = HTTPWire.responses(harness.stream.takeWritten())
        XCTAssertEqual(answers.map(\.status), [200, 200])
        XCTAssertEqual(answers.first?.bodyText, "ok")
        XCTAssertEqual(answers.last?.bodyText,
                       "{\"room\":\"main\",\"rev\":3,\"route\":\"/home\",\"stack\":[{\"screen\":\"home\"}],\"sheets\":[]}")
        XCTAssertEqual(harness.hub.finishedBecause, [], "kept alive")
        XCTAssertEqual(harness.front.requestsTotal, 2)
        XCTAssertTrue(harness.door.carriesWeb)
        XCTAssertEqual(harness.up, [], "nothing of HTTP goes up to the hub")
    }

    func test_exchange_connectionClose_answersThenEndsTheSession() {
        harness.stream.peerSends(HTTPWire.get("/healthz", "Connection: close\r\n") + HTTPWire.get("/healthz"))
        let answers = HTTPWire.responses(harness.stream.takeWritten())
        XCTAssertEqual(answers.map(\.status), [200], "nothing after a request that closes")
        XCTAssertEqual(answers.first?.headers["connection"], "close")
        XCTAssertEqual(harness.hub.finishedBecause, ["HTTP exchange done"])
    }

    func test_exchange_backplaneDown_healthAndRoomsSay503() {
        harness.hub.storeIsAvailable = false
        harness.stream.peerSends(HTTPWire.get("/healthz") + HTTPWire.get("/rooms") + HTTPWire.get("/rooms/main"))
        XCTAssertEqual(HTTPWire.responses(harness.stream.takeWritten()).map(\.status), [503, 503, 503])
    }

    func test_exchange_writesFromAboveOnPlainHTTP_areDropped() {
        harness.stream.peerSends(HTTPWire.get("/healthz"))
        _ = harness.stream.takeWritten()
        harness.door.write([Array("BYE shutting down\n".utf8)])
        XCTAssertEqual(harness.stream.takeWritten(), [])
    }

    // MARK: Pipelining under backpressure

    func test_exchange_pipelinedRequests_pastMaxPending_pauseReadingUntilDrained_thenAllAnswerInOrder() {
        harness.hub.maxPendingOutputBytes = 100
        harness.stream.holdsWrites = true
        harness.hub.rooms = ["a": RoomState(stack: [RouteEntry(screen: "one")], revision: 1),
                             "b": RoomState(stack: [RouteEntry(screen: "two")], revision: 2),
                             "c": RoomState(stack: [RouteEntry(screen: "three")], revision: 3)]
        harness.stream.peerSends(HTTPWire.get("/rooms/a") + HTTPWire.get("/rooms/b") + HTTPWire.get("/rooms/c"))
        var bodies = HTTPWire.responses(harness.stream.takeWritten()).map(\.bodyText)
        XCTAssertEqual(bodies.count, 1, "one response is over 100 bytes: the rest wait")
        XCTAssertFalse(harness.stream.isReading, "no more requests are read meanwhile")
        harness.stream.peerSends(HTTPWire.get("/healthz"))
        XCTAssertTrue(harness.stream.hasWaitingInput)
        while bodies.count < 4 && harness.stream.queuedWriteBytes > 0 {
            harness.stream.drain()
            harness.stream.deliverWaitingInput()
            bodies += HTTPWire.responses(harness.stream.takeWritten()).map(\.bodyText)
        }
        XCTAssertEqual(bodies.count, 4)
        XCTAssertFalse(harness.stream.isReading, "the last response is over the bound too")
        harness.stream.drain()
        XCTAssertTrue(bodies[0].contains("\"room\":\"a\""))
        XCTAssertTrue(bodies[1].contains("\"room\":\"b\""))
        XCTAssertTrue(bodies[2].contains("\"room\":\"c\""))
        XCTAssertEqual(bodies[3], "ok")
        XCTAssertTrue(harness.stream.isReading)
        XCTAssertEqual(harness.drainsUp, 4, "each drain is passed up too (the hub's own backpressure)")
    }

    func test_exchange_drainedWhileTheLinkAboveStoppedReading_staysStopped() {
        harness.hub.maxPendingOutputBytes = 10
        harness.stream.holdsWrites = true
        harness.stream.peerSends(HTTPWire.get("/healthz"))
        XCTAssertFalse(harness.stream.isReading, "one response is over 10 bytes")
        harness.door.stopReading()
        harness.stream.drain()
        XCTAssertFalse(harness.stream.isReading, "the layer above holds reading back for reasons of its own")
        harness.door.startReading()
        XCTAssertTrue(harness.stream.isReading)
    }

    // MARK: Bodies

    func test_exchange_requestBody_isSkipped_wholeOrAcrossReads() {
        let post = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 12\r\n\r\nQUIT\nGET x\r\n"
        harness.stream.peerSends(post + HTTPWire.get("/healthz"))
        XCTAssertEqual(HTTPWire.responses(harness.stream.takeWritten()).map(\.status), [200, 200])
        for byte in Array((post + HTTPWire.get("/healthz")).utf8) { harness.stream.peerSends([byte]) }
        XCTAssertEqual(HTTPWire.responses(harness.stream.takeWritten()).map(\.status), [200, 200])
        XCTAssertEqual(harness.up, [], "a body never reaches the hub")
        XCTAssertEqual(harness.front.requestsTotal, 4)
    }

    // MARK: Refusals

    func test_exchange_malformedHead_isRefusedAndClosed() {
        harness.stream.peerSends("GET /healthz HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n")
        let answers = HTTPWire.responses(harness.stream.takeWritten())
        XCTAssertEqual(answers.map(\.status), [400])
        XCTAssertEqual(harness.hub.finishedBecause.count, 1)
    }

    func test_exchange_thirdWrongBearer_closesAfterIts401() {
        harness.hub.token = "right"
        let wrong = HTTPWire.get("/metrics", "Authorization: Bearer nope\r\n")
        harness.stream.peerSends(wrong + wrong)
        XCTAssertEqual(HTTPWire.responses(harness.stream.takeWritten()).map(\.status), [401, 401])
        XCTAssertEqual(harness.hub.finishedBecause, [])
        harness.stream.peerSends(wrong + HTTPWire.get("/metrics", "Authorization: Bearer right\r\n"))
        XCTAssertEqual(HTTPWire.responses(harness.stream.takeWritten()).map(\.status), [401])
        XCTAssertEqual(harness.hub.bearers, ["nope", "nope", "nope"])
        XCTAssertEqual(harness.hub.finishedBecause.count, 1)
    }

    func test_exchange_rightBearer_servesMetricsFromTheHub() {
        harness.hub.token = "right"
        harness.stream.peerSends(HTTPWire.get("/metrics", "Authorization: Bearer right\r\n"))
        let answers = HTTPWire.responses(harness.stream.takeWritten())
        XCTAssertEqual(answers.map(\.status), [200])
        XCTAssertEqual(answers.first?.bodyText, "navsync_fake 1\n")
    }

    // MARK: Input once the link is closing

    func test_connectionDoor_afterShutdownWrite_inputIsNotServed() {
        harness.stream.peerSends(HTTPWire.get("/healthz"))
        _ = harness.stream.takeWritten()
        harness.door.shutdownWrite()
        XCTAssertTrue(harness.stream.writeShutDown)
        harness.stream.peerSends(HTTPWire.get("/healthz"))
        XCTAssertEqual(harness.stream.takeWritten(), [])
        XCTAssertEqual(harness.front.requestsTotal, 1)
    }
}

/// The head timer, on a real loop with a short timeout.
final class ConnectionDoorHeadTimerTests: XCTestCase {
    func test_exchange_headStartedAndStalled_gets408AndEnds() throws {
        let harness = try DoorHarness(headTimeoutMilliseconds: 20)
        defer { harness.tearDown() }
        harness.stream.peerSends("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        harness.runLoop(until: { !harness.hub.finishedBecause.isEmpty })
        XCTAssertEqual(HTTPWire.responses(harness.stream.takeWritten()).map(\.status), [408])
        XCTAssertEqual(harness.hub.finishedBecause, ["HTTP request head timed out"])
    }

    func test_exchange_idleAfterAResponse_isClosedWithoutOne() throws {
        let harness = try DoorHarness(headTimeoutMilliseconds: 20)
        defer { harness.tearDown() }
        harness.stream.peerSends(HTTPWire.get("/healthz"))
        XCTAssertEqual(HTTPWire.responses(harness.stream.takeWritten()).map(\.status), [200])
        harness.runLoop(until: { !harness.hub.finishedBecause.isEmpty })
        XCTAssertEqual(harness.stream.takeWritten(), [])
        XCTAssertEqual(harness.hub.finishedBecause, ["HTTP connection idle"])
    }

    func test_exchange_bodyStillArriving_gets408() throws {
        let harness = try DoorHarness(headTimeoutMilliseconds: 20)
        defer { harness.tearDown() }
        harness.stream.peerSends("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\nabc")
        XCTAssertEqual(HTTPWire.responses(harness.stream.takeWritten()).map(\.status), [200])
        harness.runLoop(until: { !harness.hub.finishedBecause.isEmpty })
        XCTAssertEqual(HTTPWire.responses(harness.stream.takeWritten()).map(\.status), [408])
    }

    func test_connectionDoor_aReadOfManyRequests_isServedAShareATurn_allInOrder() throws {
        let harness = try DoorHarness()
        defer { harness.tearDown() }
        let one = HTTPWire.get("/healthz")
        let count = 3 * ConnectionDoor.inputBytesPerTurn / one.utf8.count
        harness.stream.peerSends(String(repeating: one, count: count))
        var answered = HTTPWire.responses(harness.stream.takeWritten()).count
        XCTAssertLessThanOrEqual(answered, ConnectionDoor.inputBytesPerTurn / one.utf8.count, "one share now")
        XCTAssertGreaterThan(answered, 0)
        XCTAssertFalse(harness.stream.isReading, "the rest waits, read already")
        harness.runLoop(until: {
            answered += HTTPWire.responses(harness.stream.takeWritten()).count
            return answered >= count
        })
        XCTAssertEqual(answered, count)
        XCTAssertTrue(harness.stream.isReading, "reading goes on once the held input is served")
        XCTAssertEqual(harness.front.requestsTotal, UInt64(count))
    }

    func test_exchange_upgradedConnection_hasNoHeadTimer() throws {
        let harness = try DoorHarness(headTimeoutMilliseconds: 20)
        defer { harness.tearDown() }
        XCTAssertEqual(harness.upgrade()?.status, 101)
        // A later timer of the test's own: the head timer, had it stayed, would have fired first.
        var later = false
        let timer = LoopTimer(loop: harness.loop)
        timer.start(afterMilliseconds: 100) { later = true }
        harness.runLoop(until: { later })
        timer.close()
        XCTAssertEqual(harness.hub.finishedBecause, [])
        XCTAssertEqual(harness.stream.takeWritten(), [])
    }
}
