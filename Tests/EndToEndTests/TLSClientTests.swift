import ChildProcessHarness
import Foundation
import NavSyncKit
import TLSCertificateHarness
import XCTest

/// `navsync` and NavSyncKit against TLS daemons holding each test
/// certificate: trusted, from an unrelated CA, for another name, expired.
/// The check is always on; a failure is one line and exit 1 for one-shots.
final class TLSClientTests: XCTestCase {
    private var certs: TestCertificates { TestCertificates.shared }

    private func daemon(certificate: String? = nil) throws -> DaemonProcess {
        try DaemonProcess(arguments: ["--tls-listen", "127.0.0.1:0", "--tls-cert", certificate ?? certs.serverCertificate,
                                      "--tls-key", certs.serverKey], state: "none")
    }

    func test_navsync_trustedCertificate_byAddressByNameAndFromTheEnvironment() throws {
        let daemon = try daemon()
        let byAddress = try navsync(["--connect", "tls://127.0.0.1:\(daemon.tlsPort)", "--tls-ca", certs.caFile, "push", "blue", "hi"])
        XCTAssertEqual(byAddress.status, 0, byAddress.stderr)
        XCTAssertEqual(byAddress.stdout, "1\n")
        let byName = try navsync(["--connect", "tls://localhost:\(daemon.tlsPort)", "--tls-ca", certs.caFile, "get"])
        XCTAssertEqual(byName.stdout, "/red/blue:hi\n", byName.stderr)
        let fromEnvironment = try navsync(["get"], environment: ["NAVSYNC_ADDR": "tls://127.0.0.1:\(daemon.tlsPort)",
                                                                 "NAVSYNC_TLS_CA": certs.caFile])
        XCTAssertEqual(fromEnvironment.stdout, "/red/blue:hi\n", fromEnvironment.stderr)
        let raw = try navsync(["--connect", "tls://127.0.0.1:\(daemon.tlsPort)", "--tls-ca", certs.caFile, "raw", "GET", "PING"])
        XCTAssertEqual(raw.status, 0, raw.stderr)
        XCTAssertEqual(raw.stdout, "STATE 1 /red/blue:hi\nPONG\n")
    }

    /// One line on stderr, exit 1, nothing on stdout, and the reason in the line.
    private func assertRefused(_ result: RunResult, because reason: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.status, 1, result.stderr, file: file, line: line)
        XCTAssertEqual(result.stdout, "", file: file, line: line)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr, file: file, line: line)
        XCTAssertTrue(result.stderr.lowercased().contains(reason.lowercased()), result.stderr, file: file, line: line)
    }

    func test_navsync_unrelatedCAOrNoneIsRefused() throws {
        let daemon = try daemon()
        let address = "tls://127.0.0.1:\(daemon.tlsPort)"
        assertRefused(try navsync(["--connect", address, "--tls-ca", certs.unrelatedCAFile, "get"]),
                      because: "certificate verify failed")
        // The system's roots alone do not know the test CA: no switch makes that pass.
        assertRefused(try navsync(["--connect", address, "get"]), because: "certificate verify failed")
        assertRefused(try navsync(["--connect", address, "--tls-ca", certs.directory + "/absent.pem", "get"]),
                      because: "absent.pem")
    }

    /// The refusal says what to do, before OpenSSL's reason.
    func test_navsync_unknownAuthority_saysPassTLSCA() throws {
        let daemon = try daemon()
        let result = try navsync(["--connect", "tls://127.0.0.1:\(daemon.tlsPort)", "get"])
        assertRefused(result, because: "the certificate is not signed by a known authority — pass --tls-ca FILE for a private CA")
    }

    /// A plain address reached with tls://, and a TLS port reached without it.
    func test_navsync_plainAndTLSMixedUp_sayWhichWayRound() throws {
        let daemon = try DaemonProcess(arguments: ["--tls-listen", "127.0.0.1:0", "--tls-cert", certs.serverCertificate,
                                                   "--tls-key", certs.serverKey, "--listen", "127.0.0.1:0"], state: "none")
        assertRefused(try navsync(["--connect", "tls://127.0.0.1:\(daemon.port)", "--tls-ca", certs.caFile, "get"]),
                      because: "this address does not speak TLS: drop tls://")
        // (A greeting of five bytes or more: shorter, like `GET`, OpenSSL waits for the rest of
        // a record header and the words come only when the reply times out, after 10 s.)
        assertRefused(try navsync(["--connect", "127.0.0.1:\(daemon.tlsPort)", "screens"]),
                      because: "this address speaks TLS: use tls://127.0.0.1:\(daemon.tlsPort)")
    }

    func test_navsync_certificateForAnotherNameIsRefused() throws {
        let daemon = try daemon(certificate: certs.wrongNameCertificate)
        assertRefused(try navsync(["--connect", "tls://localhost:\(daemon.tlsPort)", "--tls-ca", certs.caFile, "get"]),
                      because: "hostname mismatch")
        assertRefused(try navsync(["--connect", "tls://127.0.0.1:\(daemon.tlsPort)", "--tls-ca", certs.caFile, "get"]),
                      because: "ip address mismatch")
    }

    func test_navsync_expiredCertificateIsRefused() throws {
        let daemon = try daemon(certificate: certs.expiredCertificate)
        assertRefused(try navsync(["--connect", "tls://127.0.0.1:\(daemon.tlsPort)", "--tls-ca", certs.caFile, "get"]),
                      because: "expired")
    }

    func test_watch_overTLS_streamsAndReportsARefusalWhileRetrying() throws {
        let daemon = try daemon()
        var environment = ProcessInfo.processInfo.environment
        environment["NAVSYNC_ADDR"] = nil
        let watch = try StreamingProcess(Binaries.client, ["--connect", "tls://127.0.0.1:\(daemon.tlsPort)", "--tls-ca",
                                                           certs.caFile, "watch"], environment: environment)
        defer { watch.stop() }
        XCTAssertEqual(watch.waitForLines(1), ["0 state /red"])
        XCTAssertEqual(try navsync(["--connect", "tls://127.0.0.1:\(daemon.tlsPort)", "--tls-ca", certs.caFile, "push", "green"]).status, 0)
        XCTAssertEqual(watch.waitForLines(2).last, "1 push /red/green")

        let refused = try StreamingProcess(Binaries.client, ["--connect", "tls://127.0.0.1:\(daemon.tlsPort)", "--tls-ca",
                                                             certs.unrelatedCAFile, "--retry", "watch"], environment: environment)
        defer { refused.stop() }
        XCTAssertTrue(waitUntil(timeout: 20) { refused.stderr.contains("certificate verify failed") }, refused.stderr)
        XCTAssertTrue(refused.process.isRunning, "watch --retry keeps trying")
        XCTAssertEqual(refused.stdout, "")
    }
}

/// NavSyncKit's `tlsCA` (SWIFT-LIBRARY.md).
@MainActor
final class TLSLibraryTests: XCTestCase {
    func test_sharedNavigation_overTLS_trustsTheGivenCAOnly() async throws {
        let certs = try TestCertificates()
        let daemon = try DaemonProcess(arguments: ["--tls-listen", "127.0.0.1:0", "--tls-cert", certs.serverCertificate,
                                                   "--tls-key", certs.serverKey], state: "none")
        defer { daemon.stop() }
        let address = "tls://127.0.0.1:\(daemon.tlsPort)"
        let navigation = SharedNavigation<NavEntry>(connect: address, room: "kit", tlsCA: certs.caFile)
        try await navigation.start()
        try await navigation.push(NavEntry("blue"))
        XCTAssertEqual(navigation.revision, 1)
        await navigation.stop()

        let untrusting = SharedNavigation<NavEntry>(connect: address, room: "kit", tlsCA: certs.unrelatedCAFile)
        do {
            try await untrusting.start()
            XCTFail("a certificate from an untrusted CA must not connect")
        } catch {
            XCTAssertEqual(error as? NavSyncError, .disconnected)
        }
        guard case .failed(let reason) = untrusting.connection else { return XCTFail("\(untrusting.connection)") }
        XCTAssertTrue(reason.contains("certificate verify failed"), reason)
        await untrusting.stop()
    }
}
