@testable import NavSyncTLS
import NavSyncCore
import TLSCertificateHarness
import XCTest

/// A TLS 1.3 server engine's own record layer (after the SSL object is
/// freed) against OpenSSL's client: every record it opens or seals is
/// checked by the other implementation.
final class TLS13RecordsTests: XCTestCase {
    private var certs: TestCertificates { TestCertificates.shared }

    private func connectedPair(maximumTLS12: Bool = false, cipherSuites: String? = nil) throws -> (client: TLSEngine, server: TLSEngine) {
        let server = try TLSEngine(server: TLSServerContext(certificateFile: certs.serverCertificate, keyFile: certs.serverKey))
        // OpenSSL's own record layer on the client: the other implementation checks ours.
        let client = try TLSEngine(client: TLSClientContext(extraRootsFile: certs.caFile), serverName: "127.0.0.1",
                                   maximumTLS12: maximumTLS12, cipherSuites: cipherSuites, handsOverRecords: false)
        pump(client, server)
        XCTAssertEqual(client.state, .established)
        XCTAssertEqual(server.state, .established)
        return (client, server)
    }

    func test_records_everySuite_handedOverAndCarryBothWays() throws {
        for suite in ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"] {
            let (client, server) = try connectedPair(cipherSuites: suite)
            XCTAssertFalse(server.holdsOpenSSLConnection, suite)
            XCTAssertEqual(server.protocolVersion, "TLSv1.3", suite)
            for round in 0..<3 {
                let line = Array("PUSH blue \(round) \(suite)\n".utf8)
                client.send(line)
                XCTAssertEqual(pump(client, server).server, line, suite)
                let event = Array("EVENT \(round) /red/blue\n".utf8)
                server.send(event)
                XCTAssertEqual(pump(client, server).client, event, suite)
            }
        }
    }

    func test_records_byteAtATimeAndManyPerChunk_deliverTheSameBytes() throws {
        let (client, server) = try connectedPair()
        var expected: [UInt8] = []
        for index in 0..<200 {
            let line = Array("PING \(index)\n".utf8)
            expected += line
            client.send(line)
        }
        let records = client.takeOutgoing()
        XCTAssertEqual(feed(server, records, piece: 1), expected)
        for index in 0..<200 { client.send(Array("PING \(index)\n".utf8)) }
        XCTAssertEqual(feed(server, client.takeOutgoing(), piece: nil), expected)
        for index in 0..<200 { client.send(Array("PING \(index)\n".utf8)) }
        XCTAssertEqual(feed(server, client.takeOutgoing(), piece: 7), expected)
        // Longer than a record: split into several, read whole by OpenSSL.
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 100_000)
        server.send(big)
        XCTAssertEqual(feed(client, server.takeOutgoing(), piece: 1000), big)
        XCTAssertEqual(server.state, .established)
    }

    func test_records_dataSentWithTheClientsFinished_isRead() throws {
        let server = try TLSEngine(server: TLSServerContext(certificateFile: certs.serverCertificate, keyFile: certs.serverKey))
        let client = try TLSEngine(client: TLSClientContext(extraRootsFile: certs.caFile), serverName: "127.0.0.1",
                                   maximumTLS12: false, cipherSuites: nil, handsOverRecords: false)
        _ = server.receive(client.takeOutgoing())            // ClientHello
        _ = client.receive(server.takeOutgoing())            // the server's flight: the client is done
        XCTAssertEqual(client.state, .established)
        client.send(Array("GET\n".utf8))                     // waits behind the client's Finished
        XCTAssertEqual(server.receive(client.takeOutgoing()), Array("GET\n".utf8))
        XCTAssertFalse(server.holdsOpenSSLConnection)
    }

    func test_records_keyUpdateFromTheClient_bothWaysAndRepeated() throws {
        let (client, server) = try connectedPair()
        for round in 0..<4 {
            let requesting = round % 2 == 0
            XCTAssertTrue(client.updateKeys(requestingPeer: requesting))
            client.send(Array("after update \(round)\n".utf8))
            XCTAssertEqual(pump(client, server).server, Array("after update \(round)\n".utf8))
            server.send(Array("answer \(round)\n".utf8))
            XCTAssertEqual(pump(client, server).client, Array("answer \(round)\n".utf8), "round \(round): our write keys match the client's view")
            XCTAssertEqual(client.state, .established)
            XCTAssertEqual(server.state, .established)
        }
    }

    func test_records_tamperedRecord_failsWithAnAlertThePeerReads() throws {
        let (client, server) = try connectedPair()
        client.send(Array("GET\n".utf8))
        var record = client.takeOutgoing()
        record[record.count - 3] ^= 0x01
        XCTAssertEqual(server.receive(record), [])
        guard case .failed(let reason) = server.state else { return XCTFail("state \(server.state)") }
        XCTAssertTrue(reason.contains("bad record MAC"), reason)
        _ = client.receive(server.takeOutgoing())
        guard case .failed(let clientReason) = client.state else { return XCTFail("client state \(client.state)") }
        XCTAssertTrue(clientReason.lowercased().contains("bad record mac"), clientReason)
        XCTAssertEqual(server.receive(Array("more".utf8)), [], "nothing is read after a failure")
    }

    func test_records_malformedHeaders_failTheConnection() throws {
        let table: [(String, [UInt8], String)] = [
            ("a handshake record in the clear", [22, 3, 3, 0, 20] + [UInt8](repeating: 0, count: 20), "unexpected record type 22"),
            ("change_cipher_spec after the handshake", [20, 3, 3, 0, 1, 1], "unexpected record type 20"),
            ("too long", [23, 3, 3, 0x41, 0x01], "longer than TLS allows"),
            ("too short", [23, 3, 3, 0, 16] + [UInt8](repeating: 0, count: 16), "too short"),
        ]
        for (name, bytes, expected) in table {
            let (_, server) = try connectedPair()
            _ = feed(server, bytes, piece: 1)
            guard case .failed(let reason) = server.state else { XCTFail("\(name): state \(server.state)"); continue }
            XCTAssertTrue(reason.contains(expected), "\(name): \(reason)")
            XCTAssertFalse(server.takeOutgoing().isEmpty, "\(name): an alert is sealed for the peer")
        }
    }

    func test_records_closeNotifyBothWays() throws {
        let (client, server) = try connectedPair()
        server.send(Array("last\n".utf8))
        server.finish()
        XCTAssertEqual(pump(client, server).client, Array("last\n".utf8))
        XCTAssertEqual(client.state, .peerClosed)
        client.send(Array("bye\n".utf8))
        client.finish()
        XCTAssertEqual(pump(client, server).server, Array("bye\n".utf8))
        XCTAssertEqual(server.state, .peerClosed)
        XCTAssertEqual(server.receive(Array("ignored".utf8)), [])
    }

    func test_records_tls12Client_staysWithOpenSSL() throws {
        let (client, server) = try connectedPair(maximumTLS12: true)
        XCTAssertEqual(server.protocolVersion, "TLSv1.2")
        XCTAssertTrue(server.holdsOpenSSLConnection)
        client.send(Array("GET\n".utf8))
        XCTAssertEqual(pump(client, server).server, Array("GET\n".utf8))
        server.send(Array("STATE 0 /red\n".utf8))
        XCTAssertEqual(pump(client, server).client, Array("STATE 0 /red\n".utf8))
    }

    func test_records_releaseForgetsEverything() throws {
        let (client, server) = try connectedPair()
        server.release()
        XCTAssertFalse(server.send(Array("x".utf8)) && !server.takeOutgoing().isEmpty)
        client.send(Array("GET\n".utf8))
        XCTAssertEqual(server.receive(client.takeOutgoing()), [])
    }

    // MARK: The client's own record layer

    /// A client with its own record layer against a server keeping OpenSSL's (which sends tickets).
    private func clientAgainstOpenSSLServer(tickets: Int, cipherSuites: String? = nil) throws -> (client: TLSEngine, server: TLSEngine) {
        let context = try TLSServerContext(certificateFile: certs.serverCertificate, keyFile: certs.serverKey)
        context.issueTickets(tickets)
        let server = try TLSEngine(server: context, handsOverRecords: false)
        let client = try TLSEngine(client: TLSClientContext(extraRootsFile: certs.caFile), serverName: "127.0.0.1",
                                   maximumTLS12: false, cipherSuites: cipherSuites, handsOverRecords: true)
        pump(client, server)
        XCTAssertEqual(client.state, .established)
        XCTAssertEqual(server.state, .established)
        return (client, server)
    }

    func test_clientRecords_passOverTicketsAndCarryBothWays_everySuite() throws {
        for suite in ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"] {
            let (client, server) = try clientAgainstOpenSSLServer(tickets: 2, cipherSuites: suite)
            XCTAssertFalse(client.holdsOpenSSLConnection, suite)
            XCTAssertTrue(server.holdsOpenSSLConnection, suite)
            server.send(Array("STATE 0 /red\n".utf8))
            XCTAssertEqual(pump(client, server, piece: 1).client, Array("STATE 0 /red\n".utf8), suite)
            client.send(Array("GET\n".utf8))
            XCTAssertEqual(pump(client, server).server, Array("GET\n".utf8), suite)
            XCTAssertEqual(client.state, .established, suite)
        }
    }

    func test_clientRecords_serverKeyUpdate_answeredAndFollowed() throws {
        let (client, server) = try clientAgainstOpenSSLServer(tickets: 1)
        for round in 0..<3 {
            XCTAssertTrue(server.updateKeys(requestingPeer: round != 1))
            server.send(Array("event \(round)\n".utf8))
            XCTAssertEqual(pump(client, server).client, Array("event \(round)\n".utf8))
            client.send(Array("line \(round)\n".utf8))
            XCTAssertEqual(pump(client, server).server, Array("line \(round)\n".utf8))
        }
        XCTAssertEqual(server.state, .established)
    }

    func test_clientRecords_againstOurServer_bothOwnRecordLayers() throws {
        let server = try TLSEngine(server: TLSServerContext(certificateFile: certs.serverCertificate, keyFile: certs.serverKey))
        let client = try TLSEngine(client: TLSClientContext(extraRootsFile: certs.caFile), serverName: "127.0.0.1")
        pump(client, server)
        XCTAssertFalse(client.holdsOpenSSLConnection)
        XCTAssertFalse(server.holdsOpenSSLConnection)
        XCTAssertEqual(client.protocolVersion, "TLSv1.3")
        let big = [UInt8](repeating: UInt8(ascii: "y"), count: 70_000)
        server.send(big)
        XCTAssertEqual(pump(client, server, piece: 333).client, big)
        client.finish()
        pump(client, server)
        XCTAssertEqual(server.state, .peerClosed)
    }

    func test_clientRecords_certificateRequestAfterHandshake_refused() {
        var reader = TLSPostHandshakeReaderProbe()
        XCTAssertEqual(reader.read([13, 0, 0, 4, 0, 0, 0, 0]), "unexpected handshake message 13 after the handshake")
    }

    // MARK: Offering records to the socket

    func test_offerOutgoing_takenInPieces_leavesTheRestInOrder() throws {
        let (client, server) = try connectedPair()
        var sent: [UInt8] = []
        for index in 0..<5 {
            let event = Array("EVENT \(index) /red/blue\n".utf8)
            sent += event
            server.send(event)
        }
        var wire: [UInt8] = []
        // A kernel that takes 37 bytes: the rest comes back, and nothing is left behind.
        let rest = server.offerOutgoing { records in
            wire += records.prefix(37)
            return 37
        }
        XCTAssertFalse(rest.isEmpty)
        wire += rest
        XCTAssertEqual(server.outgoingCount, 0)
        XCTAssertEqual(feed(client, wire, piece: nil), sent)
        // The next turn seals into the buffer kept from the last: still whole records.
        server.send(Array("EVENT 5 /red\n".utf8))
        let next = server.offerOutgoing { records in
            wire = Array(records)
            return records.count
        }
        XCTAssertEqual(next, [])
        XCTAssertEqual(feed(client, wire, piece: 3), Array("EVENT 5 /red\n".utf8))
    }

    func test_offerOutgoing_nothingTaken_returnsEveryRecord() throws {
        let (client, server) = try connectedPair()
        server.send(Array("EVENT 1 /red\n".utf8))
        let rest = server.offerOutgoing { _ in 0 }
        XCTAssertEqual(server.outgoingCount, 0)
        XCTAssertEqual(feed(client, rest, piece: nil), Array("EVENT 1 /red\n".utf8))
        XCTAssertEqual(server.offerOutgoing { _ in XCTFail("nothing waits"); return 0 }, [])
    }

    func test_offerOutgoing_aBurstsBuffer_isNotKeptWhileIdle() throws {
        let (_, server) = try connectedPair()
        server.send([UInt8](repeating: UInt8(ascii: "x"), count: 10_000))
        XCTAssertEqual(server.offerOutgoing { $0.count }, [])
        XCTAssertLessThanOrEqual(server.recordBufferCapacity, TLSEngine.keptRecordCapacity)
        server.send(Array("EVENT 1 /red\n".utf8))
        XCTAssertEqual(server.offerOutgoing { $0.count }, [])
        XCTAssertGreaterThan(server.recordBufferCapacity, 0)
        XCTAssertLessThanOrEqual(server.recordBufferCapacity, TLSEngine.keptRecordCapacity)
    }

    func test_records_clientEnd_opensManyArrivalsInARow() throws {
        // Our own record layer on both ends: the client keeps its reading cipher between arrivals.
        let server = try TLSEngine(server: TLSServerContext(certificateFile: certs.serverCertificate, keyFile: certs.serverKey))
        let client = try TLSEngine(client: TLSClientContext(extraRootsFile: certs.caFile), serverName: "127.0.0.1")
        pump(client, server)
        XCTAssertFalse(client.holdsOpenSSLConnection)
        XCTAssertFalse(server.holdsOpenSSLConnection)
        for index in 0..<300 {
            let event = Array("EVENT \(index) /red/blue\n".utf8)
            server.send(event)
            XCTAssertEqual(feed(client, server.takeOutgoing(), piece: index % 2 == 0 ? nil : 11), event)
            if index % 50 == 0 {
                let line = Array("PING \(index)\n".utf8)
                client.send(line)
                XCTAssertEqual(feed(server, client.takeOutgoing(), piece: nil), line)
            }
        }
    }
}

/// The client's post-handshake reader, as the client record layer uses it.
private struct TLSPostHandshakeReaderProbe {
    private var reader = TLSPostHandshakeReader(reader: .client)
    mutating func read(_ bytes: [UInt8]) -> String? {
        do {
            _ = try bytes.withUnsafeBytes { bytes throws(TLSPostHandshakeReader.Failure) in try reader.read(record: bytes) }
            return nil
        } catch let failure as TLSPostHandshakeReader.Failure {
            return failure.description
        } catch {
            return "\(error)"
        }
    }
}
