import ChildProcessHarness
import Foundation
import TLSCertificateHarness
import XCTest

/// navsyncd's TLS listeners from outside: Python's `ssl` as the client,
/// certificates made for this run (PROTOCOL.md *TLS*).
final class TLSDaemonTests: XCTestCase {
    private var certs: TestCertificates { TestCertificates.shared }

    private func tlsArguments(certificate: String? = nil, key: String? = nil) -> [String] {
        ["--tls-listen", "127.0.0.1:0", "--tls-cert", certificate ?? certs.serverCertificate,
         "--tls-key", key ?? certs.serverKey]
    }

    func test_tls_lineProtocolInsideTLSSharesRoomsWithPlainClients() throws {
        let daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:0", "--log-level", "error"] + tlsArguments(),
                                       state: "none")
        XCTAssertGreaterThan(daemon.tlsPort, 0)
        // The log is read as it comes: readiness was the listening line, the one after it may trail.
        XCTAssertTrue(waitUntil { daemon.log.contains("listening on tls://127.0.0.1:\(daemon.tlsPort)") }, daemon.log)
        XCTAssertTrue(waitUntil { daemon.log.contains("web client at https://127.0.0.1:\(daemon.tlsPort)/") }, daemon.log)
        let result = try TLSPeer.run("lines", port: daemon.tlsPort, ca: certs.caFile, ["GET", "PUSH blue over-tls", "PING x"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4, result.stdout)
        XCTAssertTrue(lines[0].hasPrefix("PEER localhost TLSv1."), lines[0])
        XCTAssertEqual(Array(lines.dropFirst()), ["STATE 0 /red", "OK 1", "PONG x"])
        XCTAssertEqual(try daemon.connect().request("GET"), "STATE 1 /red/blue:over-tls")
        // The name the certificate gives works as well as the address.
        let byName = try TLSPeer.run("lines", port: daemon.tlsPort, ca: certs.caFile, name: "localhost", ["GET"])
        XCTAssertTrue(byName.stdout.hasSuffix("STATE 1 /red/blue:over-tls\n"), byName.stdout)
    }

    func test_tls_onlyTLSListenersMeansNoPlainOne() throws {
        let daemon = try DaemonProcess(arguments: tlsArguments(), state: "none")
        XCTAssertEqual(daemon.listeningAddresses, ["tls://127.0.0.1:\(daemon.tlsPort)"])
        XCTAssertEqual(daemon.port, 0)
        let result = try TLSPeer.run("lines", port: daemon.tlsPort, ca: certs.caFile, ["GET"])
        XCTAssertTrue(result.stdout.hasSuffix("STATE 0 /red\n"), result.stdout + result.stderr)
    }

    func test_tls_httpsServesThePageAndJudgesOriginsAsHTTPS() throws {
        let daemon = try DaemonProcess(arguments: tlsArguments(), state: "none")
        let origin = "127.0.0.1:\(daemon.tlsPort)"
        let page = try TLSPeer.run("http", port: daemon.tlsPort, ca: certs.caFile,
                                   stdin: "GET / HTTP/1.1\r\nHost: \(origin)\r\nConnection: close\r\n\r\n")
        XCTAssertTrue(page.stdout.contains("HTTP/1.1 200"), page.stdout)
        XCTAssertTrue(page.stdout.lowercased().contains("<!doctype html>"))
        // The page picks wss:// when it was loaded over https://.
        XCTAssertTrue(page.stdout.contains("\"wss://\""))

        func upgrade(origin: String) throws -> String {
            let request = "GET /ws HTTP/1.1\r\nHost: \(daemon.tlsHost)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: \(origin)\r\n\r\n"
            let result = try TLSPeer.run("head", port: daemon.tlsPort, ca: certs.caFile, stdin: request)
            return result.stdout.split(separator: "\n").dropFirst().first.map(String.init) ?? result.stdout
        }
        XCTAssertTrue(try upgrade(origin: "https://\(origin)").contains("101"))
        XCTAssertTrue(try upgrade(origin: "http://\(origin)").contains("403"), "the plain page is another origin")
        XCTAssertTrue(try upgrade(origin: "https://evil.example").contains("403"))
    }

    func test_tls_garbageAndStalledHandshakesAreClosed() throws {
        let daemon = try DaemonProcess(arguments: tlsArguments(), state: "none")
        // Plain text where a ClientHello belongs.
        let garbage = try LineClient(port: daemon.tlsPort)
        garbage.send("GET\nPING\n")
        XCTAssertNoThrow(try garbage.readUntilClosed(timeout: 20))
        // A record header that promises 16 KiB, and a client that says nothing: both closed by the bound.
        let partial = try LineClient(port: daemon.tlsPort)
        partial.sendBytes([0x16, 0x03, 0x01, 0x40, 0x00, 0x01, 0x00])
        let silent = try LineClient(port: daemon.tlsPort)
        XCTAssertNoThrow(try partial.readUntilClosed(timeout: 20))
        XCTAssertNoThrow(try silent.readUntilClosed(timeout: 20))
        XCTAssertTrue(waitUntil { daemon.log.components(separatedBy: "handshake failed").count - 1 >= 3 }, daemon.log)
        XCTAssertTrue(waitUntil { daemon.log.contains("did not finish within 10 s") }, daemon.log)
        // None of them reached the hub; a real client still gets in.
        XCTAssertFalse(daemon.log.contains("connected ("), daemon.log)
        let result = try TLSPeer.run("lines", port: daemon.tlsPort, ca: certs.caFile, ["PING ok"])
        XCTAssertTrue(result.stdout.hasSuffix("PONG ok\n"), result.stdout)
    }

    func test_tls_overMaxClientsClosedWithoutAHandshake() throws {
        let daemon = try DaemonProcess(arguments: tlsArguments() + ["--max-clients", "1"], state: "none")
        // Accepted first (the listen queue keeps order) and still handshaking: it counts.
        let holder = try LineClient(port: daemon.tlsPort)
        let refused = try TLSPeer.run("lines", port: daemon.tlsPort, ca: certs.caFile, ["GET"])
        XCTAssertEqual(refused.status, 2, refused.stdout)
        XCTAssertTrue(refused.stdout.hasPrefix("FAILED"), refused.stdout)
        XCTAssertTrue(waitUntil { daemon.log.contains("refused before the handshake") }, daemon.log)
        holder.close()
        XCTAssertTrue(try waitUntil(timeout: 10) {
            try TLSPeer.run("lines", port: daemon.tlsPort, ca: self.certs.caFile, ["PING"]).stdout.hasSuffix("PONG\n")
        })
    }

    func test_tls_sighupReloadsTheCertificateForNewConnections() throws {
        let directory = certs.directory + "/reload-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let certificate = directory + "/cert.pem", key = directory + "/key.pem", flag = directory + "/go"
        try FileManager.default.copyItem(atPath: certs.serverCertificate, toPath: certificate)
        try FileManager.default.copyItem(atPath: certs.serverKey, toPath: key)
        let daemon = try DaemonProcess(arguments: tlsArguments(certificate: certificate, key: key), state: "none")

        let peer = try StreamingProcess(TLSPeer.python, ["-c", TLSPeer.script, "reload", "\(daemon.tlsPort)", certs.caFile,
                                                         "127.0.0.1", flag])
        defer { peer.stop() }
        XCTAssertEqual(Array(peer.waitForLines(3).prefix(3)).last, "READY", peer.stderr)
        XCTAssertTrue(peer.lines[0].hasPrefix("PEER localhost "), peer.lines[0])
        XCTAssertEqual(peer.lines[1], "A STATE 0 /red")

        // A renewed pair, as certbot leaves it: both files replaced, then SIGHUP.
        try replace(certificate, with: certs.secondCertificate)
        try replace(key, with: certs.secondKey)
        kill(daemon.pid, SIGHUP)
        XCTAssertTrue(waitUntil { daemon.log.contains("TLS certificate and key reloaded") }, daemon.log)
        FileManager.default.createFile(atPath: flag, contents: Data())
        let lines = peer.waitForLines(6)
        XCTAssertEqual(Array(lines.dropFirst(3)), ["PEER-B second", "B PONG b", "A PONG a"],
                       "new connections see the new certificate; the old one keeps working")

        // A key that does not match: the old (second) pair stays.
        try replace(key, with: certs.unrelatedKey)
        kill(daemon.pid, SIGHUP)
        XCTAssertTrue(waitUntil { daemon.log.contains("kept the old TLS certificate") }, daemon.log)
        let after = try TLSPeer.run("lines", port: daemon.tlsPort, ca: certs.caFile, ["PING"])
        XCTAssertTrue(after.stdout.hasPrefix("PEER second "), after.stdout)
        XCTAssertTrue(daemon.isRunning)
    }

    private func replace(_ path: String, with source: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: source))
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    func test_tls_flagsWithoutAPairAreUsageErrors() throws {
        let withoutKey = try runProcess(Binaries.daemon, ["--tls-listen", "127.0.0.1:0", "--tls-cert", certs.serverCertificate,
                                                          "--state", "none"])
        XCTAssertEqual(withoutKey.status, 64, withoutKey.stderr)
        XCTAssertTrue(withoutKey.stderr.contains("--tls-key"), withoutKey.stderr)
        let withoutListener = try runProcess(Binaries.daemon, ["--tls-cert", certs.serverCertificate, "--tls-key", certs.serverKey,
                                                               "--state", "none"])
        XCTAssertEqual(withoutListener.status, 64, withoutListener.stderr)
    }

    func test_tls_pairThatCannotBeUsedStopsTheStart() throws {
        let mismatched = try runProcess(Binaries.daemon, tlsArguments(key: certs.unrelatedKey) + ["--state", "none"])
        XCTAssertEqual(mismatched.status, 1, mismatched.stderr)
        XCTAssertTrue(mismatched.stderr.contains("does not match"), mismatched.stderr)
        XCTAssertEqual(mismatched.stderr.split(separator: "\n").count, 1, mismatched.stderr)
        XCTAssertFalse(mismatched.stderr.contains("listening on"))
        let missing = try runProcess(Binaries.daemon, tlsArguments(certificate: certs.directory + "/absent.pem") + ["--state", "none"])
        XCTAssertEqual(missing.status, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("absent.pem"), missing.stderr)
    }
}

extension DaemonProcess {
    /// `127.0.0.1:PORT` of the TLS listener, as a browser's `Host` would say it.
    var tlsHost: String { "127.0.0.1:\(tlsPort)" }
}
