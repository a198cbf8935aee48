import Glibc
import UVLoop
import XCTest

final class StreamConnectionTests: LoopTestCase {
    func test_connection_echo_bothWays() throws {
        let (server, client) = try connectedPair()
        // The server echoes whatever it reads.
        server.onRead = { bytes in server.write([Array(bytes)]) }
        server.startReading()
        let inbox = Inbox(client)

        client.write("ping\n")
        spin("echo") { inbox.text == "ping\n" }

        client.write([Array("multi".utf8), [], Array("-chunk\n".utf8)])
        spin("second echo") { inbox.text == "ping\nmulti-chunk\n" }
        XCTAssertEqual(inbox.ends, [])
    }

    func test_connection_stopAndStartReading_pausesAndResumes() throws {
        let (server, client) = try connectedPair()
        let inbox = Inbox(server)
        server.startReading()  // a second start is harmless
        client.write("one")
        spin("first bytes") { inbox.text == "one" }

        server.stopReading()
        client.write("two")
        idle(milliseconds: 20)
        XCTAssertEqual(inbox.text, "one", "no reads while stopped")

        server.startReading()
        spin("bytes after resume") { inbox.text == "onetwo" }
        XCTAssertEqual(inbox.ends, [])
    }

    func test_connection_manyWrites_arriveInOrder() throws {
        let (server, client) = try connectedPair()
        let inbox = Inbox(server)
        var expected: [UInt8] = []
        for index in 0..<3000 {
            // Varying chunk counts and sizes exercise both the direct and the queued path.
            let chunks = (0..<(index % 5)).map { part in Array("\(index).\(part);".utf8) }
            expected += chunks.joined()
            client.write(chunks)
            if index % 500 == 0 { loop.runOnce(nowait: true) }
        }
        spin("all bytes") { inbox.bytes.count >= expected.count }
        XCTAssertEqual(inbox.bytes, expected)
    }

    func test_connection_largeWriteToIdlePeer_queuesThenDrains() throws {
        let (server, client) = try connectedPair()
        let size = 8 * 1024 * 1024
        // A 251-byte cycle: a lost, doubled or reordered 64 KiB read would not line up again.
        let cycle = (0..<251).map { UInt8($0) }
        var payload: [UInt8] = []
        payload.reserveCapacity(size + cycle.count)
        while payload.count < size { payload.append(contentsOf: cycle) }
        payload.removeLast(payload.count - size)
        var drained = 0
        server.onWriteQueueDrained = { drained += 1 }

        server.write([Array(payload[..<(size / 2)]), Array(payload[(size / 2)...])])
        XCTAssertGreaterThan(server.queuedWriteBytes, 0, "a peer that does not read cannot take 8 MiB at once")
        idle(milliseconds: 20)
        XCTAssertGreaterThan(server.queuedWriteBytes, 0)
        XCTAssertEqual(drained, 0)

        let inbox = Inbox(client)
        spin("payload and drain") { inbox.bytes.count == size && drained > 0 }
        XCTAssertEqual(drained, 1)
        XCTAssertEqual(server.queuedWriteBytes, 0)
        XCTAssertTrue(inbox.bytes == payload, "payload arrived altered")
    }

    func test_connection_batchOfManyLargeChunks_keepsOrder() throws {
        let (server, client) = try connectedPair()
        // 150 chunks span several writev groups, and the kernel takes only part of them.
        let chunks = (0..<150).map { index in
            [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 40_000 + index)
        }
        var expected: [UInt8] = []
        for chunk in chunks { expected.append(contentsOf: chunk) }
        client.write(chunks)
        XCTAssertGreaterThan(client.queuedWriteBytes, 0)
        client.write([Array("tail".utf8)])  // queued behind the rest
        let inbox = Inbox(server)
        spin("all chunks") { inbox.bytes.count >= expected.count + 4 }
        XCTAssertTrue(inbox.bytes == expected + Array("tail".utf8), "bytes reordered or lost")
    }

    func test_connection_peerClose_reportsEOFOnce() throws {
        let (server, client) = try connectedPair()
        let inbox = Inbox(server)
        client.write("last words")
        client.close()
        XCTAssertTrue(client.isClosed)
        spin("EOF") { !inbox.ends.isEmpty }
        idle(milliseconds: 10)
        XCTAssertEqual(inbox.text, "last words")
        XCTAssertEqual(inbox.ends, [.eof])
    }

    func test_connection_shutdownWrite_peerSeesEOFButCanStillSend() throws {
        let (server, client) = try connectedPair()
        let serverInbox = Inbox(server)
        let clientInbox = Inbox(client)

        client.write("request")
        client.shutdownWrite()
        spin("server sees EOF") { serverInbox.ends == [.eof] }
        XCTAssertEqual(serverInbox.text, "request")

        server.write("reply after half-close")
        server.close()
        spin("client reads reply and EOF") { clientInbox.ends == [.eof] }
        XCTAssertEqual(clientInbox.text, "reply after half-close")
    }

    func test_connection_closeInsideOnRead_stopsAllCallbacks() throws {
        let (server, client) = try connectedPair()
        var reads = 0
        var ends = 0
        server.onRead = { _ in
            reads += 1
            server.close()
            server.close()  // idempotent, even here
        }
        server.onEnd = { _ in ends += 1 }
        server.startReading()
        let clientInbox = Inbox(client)

        client.write("first")
        spin("first read") { reads == 1 }
        client.write("second")
        client.write("third")
        spin("client sees the server's close") { !clientInbox.ends.isEmpty }
        XCTAssertEqual(reads, 1)
        XCTAssertEqual(ends, 0)
        XCTAssertTrue(server.isClosed)
        XCTAssertEqual(server.queuedWriteBytes, 0)
        server.write("ignored after close")  // must not crash
    }

    func test_connection_closeWithQueuedWrites_firesNoCallbacks() throws {
        let (server, client) = try connectedPair()
        var callbacks = 0
        server.onWriteQueueDrained = { callbacks += 1 }
        server.onEnd = { _ in callbacks += 1 }
        server.write([[UInt8](repeating: 7, count: 8 * 1024 * 1024)])
        XCTAssertGreaterThan(server.queuedWriteBytes, 0)
        server.close()
        let inbox = Inbox(client)
        spin("client sees the end") { !inbox.ends.isEmpty }
        XCTAssertEqual(callbacks, 0)
    }

    func test_connection_writeAfterPeerReset_reportsErrorLaterNotInsideWrite() throws {
        let (server, client) = try connectedPair()
        // Closing with unread input makes the kernel answer with a reset.
        server.write("unread by the client")
        idle(milliseconds: 10)
        client.close()
        idle(milliseconds: 10)

        var insideWrite = false
        var ends: [StreamEnd] = []
        server.onEnd = { end in
            XCTAssertFalse(insideWrite, "onEnd must not run inside write()")
            ends.append(end)
        }
        let writer = LoopTimer(loop: loop)
        writer.start(afterMilliseconds: 0, repeatMilliseconds: 1) {
            insideWrite = true
            server.write("more")
            insideWrite = false
        }
        spin("write error") { !ends.isEmpty }
        writer.close()
        idle(milliseconds: 10)
        XCTAssertEqual(ends.count, 1)
        guard case .error(let error)? = ends.first else {
            return XCTFail("expected a write error, got \(ends)")
        }
        XCTAssertTrue(["EPIPE", "ECONNRESET"].contains(error.name), "unexpected \(error.name)")
    }

    func test_connection_writeAfterShutdownWrite_reportsEPIPELater() throws {
        let (server, _) = try connectedPair()
        var ends: [StreamEnd] = []
        server.onEnd = { ends.append($0) }
        server.shutdownWrite()
        server.write("too late")
        XCTAssertEqual(ends, [], "not reported re-entrantly")
        spin("EPIPE") { !ends.isEmpty }
        XCTAssertEqual(ends, [.error(UVError(code: UV_EPIPE_CODE))])
    }

    func test_connection_peerDescription_namesTheOtherEnd() throws {
        var accepted: StreamConnection?
        let listener = try StreamListener.tcp(loop: loop, host: "127.0.0.1", port: 0) { accepted = $0 }
        var connected: StreamConnection?
        StreamConnection.connectTCP(loop: loop, host: "127.0.0.1", port: listener.port) {
            connected = try? $0.get()
        }
        spin("connection") { accepted != nil && connected != nil }
        XCTAssertEqual(connected?.peerDescription, listener.boundAddress)
        XCTAssertTrue(accepted?.peerDescription.hasPrefix("127.0.0.1:") ?? false)
        XCTAssertNotEqual(accepted?.peerDescription, listener.boundAddress)
        connected?.setNoDelay(true)
        accepted?.close()
        connected?.close()
        listener.close()
    }

    func test_connectTCP_nothingListening_failsWithConnectionRefused() throws {
        // Find a port that is free right now.
        let probe = try StreamListener.tcp(loop: loop, host: "127.0.0.1", port: 0) { $0.close() }
        let port = probe.port
        probe.close()

        var result: Result<StreamConnection, UVError>?
        StreamConnection.connectTCP(loop: loop, host: "127.0.0.1", port: port) { result = $0 }
        XCTAssertNil(result, "completion must not run inside connectTCP")
        spin("refusal") { result != nil }
        guard case .failure(let error)? = result else { return XCTFail("connected to a closed port") }
        XCTAssertEqual(error.name, "ECONNREFUSED")
    }

    func test_connectTCP_hostName_failsLaterWithInvalidArgument() {
        var result: Result<StreamConnection, UVError>?
        StreamConnection.connectTCP(loop: loop, host: "localhost", port: 1) { result = $0 }
        XCTAssertNil(result)
        spin("failure") { result != nil }
        guard case .failure(let error)? = result else { return XCTFail("host names are not resolved") }
        XCTAssertEqual(error.name, "EINVAL")
    }
}

/// UV_EPIPE as a number, so the tests need not import CLibUV.
let UV_EPIPE_CODE = -EPIPE
