import NavSyncTLS
import TLSCertificateHarness
import XCTest

/// A client engine and a server engine talking through memory: the
/// handshake and records cross in whatever pieces a test chooses.
final class TLSEngineTests: XCTestCase {
    private var certs: TestCertificates { TestCertificates.shared }

    private func serverEngine(certificate: String? = nil) throws -> TLSEngine {
        let context = try TLSServerContext(certificateFile: certificate ?? certs.serverCertificate, keyFile: certs.serverKey)
        return try TLSEngine(server: context)
    }

    private func clientEngine(name: String = "127.0.0.1", roots: String? = nil) throws -> TLSEngine {
        try TLSEngine(client: TLSClientContext(extraRootsFile: roots ?? certs.caFile), serverName: name)
    }

    func test_engine_handshakesAndCarriesLinesBothWays() throws {
        let client = try clientEngine(), server = try serverEngine()
        XCTAssertEqual(client.state, .handshaking)
        pump(client, server)
        XCTAssertEqual(client.state, .established)
        XCTAssertEqual(server.state, .established)
        XCTAssertEqual(client.protocolVersion, "TLSv1.3")
        client.send(Array("GET\n".utf8))
        XCTAssertEqual(pump(client, server).server, Array("GET\n".utf8))
        server.send(Array("STATE 0 /red\n".utf8))
        XCTAssertEqual(pump(client, server).client, Array("STATE 0 /red\n".utf8))
    }

    func test_engine_handshakesByteAtATime() throws {
        let client = try clientEngine(name: "localhost"), server = try serverEngine()
        pump(client, server, piece: 1)
        XCTAssertEqual(server.state, .established)
        client.send(Array("PING hello\n".utf8))
        XCTAssertEqual(pump(client, server, piece: 1).server, Array("PING hello\n".utf8))
    }

    func test_engine_takesManyRecordsInOneChunk() throws {
        let client = try clientEngine(), server = try serverEngine()
        pump(client, server)
        var expected: [UInt8] = []
        var records: [UInt8] = []
        for index in 0..<500 {
            let line = Array("PUSH blue \(index)\n".utf8)
            expected += line
            client.send(line)
            records += client.takeOutgoing()
        }
        XCTAssertEqual(server.receive(records), expected)
        // A record larger than one read of the engine arrives whole too.
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 100_000)
        server.send(big)
        XCTAssertEqual(client.receive(server.takeOutgoing()), big)
    }

    func test_engine_garbageFailsTheHandshakeWithAReason() throws {
        let server = try serverEngine()
        XCTAssertTrue(server.receive(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)).isEmpty)
        guard case .failed(let reason) = server.state else { return XCTFail("state \(server.state)") }
        XCTAssertFalse(reason.isEmpty)
        XCTAssertFalse(reason.contains("\n"))
    }

    func test_engine_partialRecordWaitsForTheRest() throws {
        let client = try clientEngine(), server = try serverEngine()
        pump(client, server)
        client.send(Array("GET\n".utf8))
        let record = client.takeOutgoing()
        XCTAssertTrue(server.receive(Array(record.dropLast())).isEmpty)
        XCTAssertEqual(server.state, .established)
        XCTAssertEqual(server.receive([record.last!]), Array("GET\n".utf8))
    }

    func test_engine_closeNotifyEndsThePeersInput() throws {
        let client = try clientEngine(), server = try serverEngine()
        pump(client, server)
        client.finish()
        pump(client, server)
        XCTAssertEqual(server.state, .peerClosed)
    }

    func test_engine_refusesCertificateFromAnUnrelatedCA() throws {
        let client = try clientEngine(roots: certs.unrelatedCAFile), server = try serverEngine()
        pump(client, server)
        guard case .failed(let reason) = client.state else { return XCTFail("state \(client.state)") }
        XCTAssertTrue(reason.contains("certificate verify failed"), reason)
    }

    func test_engine_refusesCertificateForAnotherName() throws {
        let client = try clientEngine(name: "localhost"), server = try serverEngine(certificate: certs.wrongNameCertificate)
        pump(client, server)
        guard case .failed(let reason) = client.state else { return XCTFail("state \(client.state)") }
        XCTAssertTrue(reason.lowercased().contains("hostname mismatch"), reason)
    }

    func test_engine_refusesCertificateForAnotherAddress() throws {
        // The certificate names 127.0.0.1; the client connected to 127.0.0.2.
        let client = try clientEngine(name: "127.0.0.2"), server = try serverEngine()
        pump(client, server)
        guard case .failed(let reason) = client.state else { return XCTFail("state \(client.state)") }
        XCTAssertTrue(reason.lowercased().contains("ip address mismatch"), reason)
    }

    func test_engine_refusesExpiredCertificate() throws {
        let client = try clientEngine(), server = try serverEngine(certificate: certs.expiredCertificate)
        pump(client, server)
        guard case .failed(let reason) = client.state else { return XCTFail("state \(client.state)") }
        XCTAssertTrue(reason.contains("expired"), reason)
    }

    func test_serverContext_refusesKeyOfAnotherCertificate() {
        XCTAssertThrowsError(try TLSServerContext(certificateFile: certs.serverCertificate, keyFile: certs.unrelatedKey)) { error in
            XCTAssertTrue("\(error)".contains("does not match"), "\(error)")
        }
    }

    func test_serverContext_refusesMissingFile() {
        XCTAssertThrowsError(try TLSServerContext(certificateFile: certs.directory + "/absent.pem", keyFile: certs.serverKey)) { error in
            XCTAssertTrue("\(error)".contains("absent.pem"), "\(error)")
        }
    }

    func test_clientContext_refusesMissingCAFile() {
        XCTAssertThrowsError(try TLSClientContext(extraRootsFile: certs.directory + "/absent-ca.pem")) { error in
            XCTAssertTrue("\(error)".contains("absent-ca.pem"), "\(error)")
        }
    }
}
