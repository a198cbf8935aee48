import ChildProcessHarness
import Foundation
import Glibc
import RedisServerHarness
import TLSCertificateHarness
import XCTest

/// A file that holds a secret gets one `warn` line, at start and on
/// each SIGHUP that rereads it, when others may read it; a file only its
/// group may read (`root:navsync 0640`, the packaged layout) gets none.
final class SecretFileWarningTests: XCTestCase {
    private static let presenter = "presenter-token-91ad44c0"
    private var certs: TestCertificates { TestCertificates.shared }

    /// Every exposure warning (1.2 said "group or others"; 1.3 "others").
    private func warnings(_ daemon: DaemonProcess) -> [Substring] {
        daemon.log.split(separator: "\n").filter { $0.contains(" warn ") && $0.contains("may be read by") }
    }

    /// A copy of the test key with `mode`.
    private func key(_ dir: TemporaryDirectory, mode: mode_t) throws -> String {
        let path = dir.file("server-\(String(mode, radix: 8)).key")
        try FileManager.default.copyItem(atPath: certs.serverKey, toPath: path)
        chmod(path, mode)
        return path
    }

    func test_secretFiles_othersMayRead_warnAtStartAndOnSIGHUP_groupReadable_doesNot() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let tokens = try dir.write("grants", "control * \(Self.presenter)\n")
        let tlsKey = try key(dir, mode: 0o640)
        chmod(tokens, 0o640)
        let quiet = try DaemonProcess(arguments: ["--tokens", tokens, "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0",
                                                  "--tls-cert", certs.serverCertificate, "--tls-key", tlsKey], state: "none")
        defer { quiet.stop() }
        XCTAssertTrue(try quiet.connect().request("PING ready").hasPrefix("PONG"))
        XCTAssertEqual(warnings(quiet), [], quiet.log)

        // Others may read both now: each is named once on the next SIGHUP.
        chmod(tokens, 0o644)
        chmod(tlsKey, 0o604)
        kill(quiet.pid, SIGHUP)
        XCTAssertTrue(waitUntil { self.warnings(quiet).count == 2 }, quiet.log)
        XCTAssertTrue(warnings(quiet).allSatisfy { $0.contains("SIGHUP: ") }, quiet.log)
        XCTAssertTrue(warnings(quiet).contains { $0.contains("tokens file \(tokens)") })
        XCTAssertTrue(warnings(quiet).contains { $0.contains("TLS key \(tlsKey)") })

        // And at start.
        let loud = try DaemonProcess(arguments: ["--tokens", tokens, "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0",
                                                 "--tls-cert", certs.serverCertificate, "--tls-key", tlsKey], state: "none")
        defer { loud.stop() }
        XCTAssertTrue(waitUntil { self.warnings(loud).count == 2 }, loud.log)
        XCTAssertTrue(warnings(loud).allSatisfy { $0.contains("may be read by others (mode ") }, loud.log)
        XCTAssertFalse(loud.log.contains(Self.presenter))
    }

    func test_secretFiles_tokenFileAndBackplaneAuth_othersMayRead_warn() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let password = "redis-pass-0c3a9e"
        let redis = try RedisServerProcess(arguments: ["--requirepass", password])
        defer { redis.remove() }
        let auth = try dir.write("redis-auth", password + "\n")
        let token = try dir.write("token", Self.presenter + "\n")
        chmod(auth, 0o640)
        chmod(token, 0o640)
        let quiet = try DaemonProcess(arguments: ["--backplane", redis.url, "--backplane-auth", auth, "--token-file", token])
        defer { quiet.stop() }
        XCTAssertTrue(try quiet.connect().request("PING ready").hasPrefix("PONG"))
        XCTAssertEqual(warnings(quiet), [], quiet.log)
        chmod(auth, 0o644)
        chmod(token, 0o644)
        let loud = try DaemonProcess(arguments: ["--backplane", redis.url, "--backplane-auth", auth, "--token-file", token])
        defer { loud.stop() }
        XCTAssertTrue(waitUntil { self.warnings(loud).count == 2 }, loud.log)
        XCTAssertTrue(warnings(loud).contains { $0.contains("backplane auth file \(auth)") })
        XCTAssertTrue(warnings(loud).contains { $0.contains("token file \(token)") })
        XCTAssertFalse(loud.log.contains(password))
    }
}
