import ChildProcessHarness
import Foundation
import Glibc
import NavSyncCore
import TLSCertificateHarness
import XCTest

/// Signed tokens against the built daemon (PROTOCOL.md *Signed tokens*):
/// both kinds of key, every refusal on its own, expiry on live TCP, TLS and
/// WebSocket connections, renewal, reloads, and tokens beside a tokens file.
final class SignedTokenTests: XCTestCase {
    private let hs = SignedTokenMinter.hs256("wall")
    private let ed = SignedTokenMinter.ed25519("laptop")
    static let staticToken = "static-presenter-token-0001"

    private func daemon(_ dir: TemporaryDirectory, extra: [String] = [], keys: [SignedTokenMinter]? = nil) throws -> (DaemonProcess, String) {
        let path = try dir.write("keys", (keys ?? [hs, ed]).map(\.daemonLine).joined(separator: "\n") + "\n")
        chmod(path, 0o600)
        return (try DaemonProcess(arguments: ["--token-keys", path] + extra, state: "none"), path)
    }

    func test_bothKinds_grantTheirClaims_andWhoamiShowsTheExpiry() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, _) = try daemon(dir)
        defer { daemon.stop() }
        XCTAssertTrue(try daemon.connect().request("GET").hasPrefix("ERR auth-required "), "--token-keys alone: tokens configured")
        let exp = Int(SignedTokenMinter.now) + 3600
        let viewer = try daemon.connect()
        let viewToken = hs.token(payload: "{\"role\":\"view\",\"rooms\":[\"hall\"],\"exp\":\(exp).75,\"name\":\"wall-1\"}")
        XCTAssertEqual(try viewer.request("AUTH \(viewToken)"), "OK 0")
        XCTAssertTrue(try viewer.request("WHOAMI").hasSuffix(" wall-1 view hall \(exp)"), "exp rounded down")
        XCTAssertTrue(try viewer.request("GET").hasPrefix("ERR forbidden "), "main is outside the grant")
        XCTAssertTrue(try viewer.request("JOIN hall").hasPrefix("STATE "))
        XCTAssertTrue(try viewer.request("SELECT green").hasPrefix("ERR forbidden "))

        let presenter = try daemon.connect()
        XCTAssertEqual(try presenter.request("AUTH \(ed.token())"), "OK 0")
        XCTAssertTrue(try presenter.request("WHOAMI").contains(" control control * "))
        XCTAssertEqual(try presenter.request("SELECT green"), "OK 1")
        // And on HTTP, as a Bearer token; an expired one is 401 with invalid_token.
        let web = try daemon.connect()
        XCTAssertEqual(try web.get("/rooms/main", headers: [("Authorization", "Bearer \(ed.token(role: "view"))")]).status, 200)
        let expired = try web.get("/rooms/main", headers: [("Authorization", "Bearer \(ed.token(role: "view", lifetime: -60))")])
        XCTAssertEqual(expired.status, 401)
        XCTAssertTrue(expired.headers["www-authenticate"]?.contains("error=\"invalid_token\"") == true, "\(expired.headers)")
        XCTAssertEqual(try web.get("/rooms/main", headers: [("Authorization", "Bearer \(hs.token(payload: "{}"))")]).status, 401)
    }

    func test_eachRefusal_isAuthFailed_countedAndNeverLogged() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, _) = try daemon(dir, extra: ["--token-audience", "hall-screens"])
        defer { daemon.stop() }
        let now = SignedTokenMinter.now
        let aud = ",\"aud\":\"hall-screens\""
        let good = hs.token(extra: aud)
        let parts = good.split(separator: ".").map(String.init)
        let stranger = SignedTokenMinter.hs256("wall", fill: 9)
        let cases: [(String, String, String)] = [
            ("alg none", Base64URL.encode(Array("{\"alg\":\"none\",\"kid\":\"wall\"}".utf8)) + "." + parts[1] + ".", "wrong token"),
            ("EdDSA header on an hs256 key", hs.token(payload: "{\"role\":\"view\",\"rooms\":\"*\",\"exp\":\(now + 60)\(aud)}",
                                                      header: "{\"alg\":\"EdDSA\",\"kid\":\"wall\"}"), "wrong token"),
            ("unknown kid", hs.token(payload: "{\"role\":\"view\",\"rooms\":\"*\",\"exp\":\(now + 60)\(aud)}",
                                     header: "{\"alg\":\"HS256\",\"kid\":\"gone\"}"), "wrong token"),
            ("another secret", stranger.token(extra: aud), "wrong token"),
            ("payload swapped", parts[0] + "." + Base64URL.encode(Array("{\"role\":\"control\",\"rooms\":\"*\",\"exp\":\(now + 60)}".utf8))
                + "." + parts[2], "wrong token"),
            ("exp missing", hs.token(payload: "{\"role\":\"view\",\"rooms\":\"*\"\(aud)}"), "wrong token"),
            ("duplicate claim", hs.token(payload: "{\"role\":\"view\",\"rooms\":\"*\",\"exp\":\(now + 60),\"role\":\"control\"\(aud)}"),
             "wrong token"),
            ("expired", hs.token(lifetime: -31, extra: aud), "token expired"),
            ("not yet valid", hs.token(extra: aud + ",\"nbf\":\(now + 120)"), "token not yet valid"),
            ("no audience", hs.token(), "wrong audience"),
            ("wrong audience", ed.token(extra: ",\"aud\":[\"elsewhere\"]"), "wrong audience"),
        ]
        for (what, token, answer) in cases {
            XCTAssertEqual(try daemon.connect().request("AUTH \(token)"), "ERR auth-failed \(answer)", what)
        }
        let admin = try daemon.connect()
        XCTAssertEqual(try admin.request("AUTH \(good)"), "OK 0")
        XCTAssertTrue(try admin.requestList("STATS").contains("STAT auth_failures \(cases.count)"))
        let log = daemon.log
        for (_, token, _) in cases {
            XCTAssertFalse(log.contains(String(token.suffix(20))), "a token reached the log")
        }
        XCTAssertFalse(log.contains(parts[1]))
    }

    func test_expiry_closesLiveTCPTLSAndWebSocketConnections() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let certs = TestCertificates.shared
        let (daemon, _) = try daemon(dir, extra: ["--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0",
                                                  "--tls-cert", certs.serverCertificate, "--tls-key", certs.serverKey])
        defer { daemon.stop() }
        // Each token's seconds count from its minting, and the TLS one is
        // minted before a Python process starts and shakes hands: eight
        // seconds, so that a slow start still authenticates in time (a late
        // AUTH is refused as auth-failed, not ended as this test expects).
        let lifetime = 8.0
        let tcp = try daemon.connect()
        XCTAssertEqual(try tcp.request("AUTH \(hs.endingSoon(in: lifetime))"), "OK 0")
        XCTAssertEqual(try tcp.request("WATCH"), "STATE 0 /red")
        let ws = try daemon.connect()
        XCTAssertEqual(try ws.upgrade().status, 101)
        ws.sendText("AUTH \(ed.endingSoon(in: lifetime))")
        XCTAssertEqual(try ws.readText(), "OK 0")
        let tls = try TLSPeer.run("http", port: daemon.tlsPort, ca: certs.caFile, stdin: "AUTH \(hs.endingSoon(in: lifetime))\nWATCH\n")
        XCTAssertEqual(tls.stdout.split(separator: "\n").dropFirst().map(String.init),
                       ["OK 0", "STATE 0 /red", "ERR forbidden token expired"], tls.stderr)
        XCTAssertEqual(try tcp.readUntilClosed(timeout: 20), ["ERR forbidden token expired"])
        XCTAssertEqual(try ws.readText(timeout: 20), "ERR forbidden token expired")
        XCTAssertEqual(try ws.readClose(), 1008)
        XCTAssertTrue(waitUntil { daemon.log.contains("signed token expired") }, daemon.log)
    }

    func test_secondAuth_renewsPastTheFirstTokensExpiry() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, _) = try daemon(dir)
        defer { daemon.stop() }
        let screen = try daemon.connect()
        // The first token must still be good when its AUTH arrives, and the
        // quiet while below must outlast it: five seconds, then seven of quiet.
        XCTAssertEqual(try screen.request("AUTH \(hs.endingSoon(in: 5))"), "OK 0")
        XCTAssertEqual(try screen.request("WATCH"), "STATE 0 /red")
        let renewed = Int(SignedTokenMinter.now) + 600
        XCTAssertEqual(try screen.request("AUTH \(hs.token(payload: "{\"role\":\"view\",\"rooms\":\"*\",\"exp\":\(renewed)}"))"), "OK 0")
        // A refused renewal keeps the grant it had.
        XCTAssertEqual(try screen.request("AUTH \(hs.token(lifetime: -40))"), "ERR auth-failed token expired")
        XCTAssertTrue(screen.staysQuiet(for: 7), "the first token's end passed without a word")
        XCTAssertTrue(try screen.request("WHOAMI").hasSuffix(" view * \(renewed)"))
        let presenter = try daemon.connect()
        XCTAssertEqual(try presenter.request("AUTH \(ed.token())"), "OK 0")
        XCTAssertEqual(try presenter.request("SELECT green"), "OK 1")
        XCTAssertEqual(try screen.readLine(), "EVENT 1 select /green")
    }

    func test_reload_revokesRemovedAndChangedKeys_keepsStaticTokensBeside() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let grants = try dir.write("grants", "control * \(Self.staticToken) presenter\n")
        chmod(grants, 0o600)
        let spare = SignedTokenMinter.hs256("spare", fill: 3)
        let (daemon, path) = try daemon(dir, extra: ["--tokens", grants], keys: [hs, ed, spare])
        defer { daemon.stop() }
        let removed = try daemon.connect(), changed = try daemon.connect(), kept = try daemon.connect(), byFile = try daemon.connect()
        XCTAssertEqual(try removed.request("AUTH \(ed.token(role: "view"))"), "OK 0")
        XCTAssertEqual(try removed.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try changed.request("AUTH \(hs.token())"), "OK 0")
        XCTAssertEqual(try kept.request("AUTH \(spare.token())"), "OK 0")
        XCTAssertEqual(try byFile.request("AUTH \(Self.staticToken)"), "OK 0")
        XCTAssertTrue(try byFile.request("WHOAMI").hasSuffix(" presenter control *"), "a static token keeps five fields")

        try ([SignedTokenMinter.hs256("wall", fill: 8), spare].map(\.daemonLine).joined(separator: "\n") + "\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertNil(daemon.signal(SIGHUP, waitUpTo: 0))
        XCTAssertEqual(try removed.readUntilClosed(), ["ERR forbidden token revoked"])
        XCTAssertEqual(try changed.readUntilClosed(), ["ERR forbidden token revoked"])
        XCTAssertEqual(try kept.request("SELECT green"), "OK 1")
        XCTAssertEqual(try byFile.request("PUSH blue"), "OK 2")
        XCTAssertTrue(try daemon.connect().request("AUTH \(ed.token())").hasPrefix("ERR auth-failed "))

        // A file the daemon must refuse keeps the old keys.
        try "spare ed25519-private \(Base64URL.encode(Array(repeating: UInt8(1), count: 32)))\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertNil(daemon.signal(SIGHUP, waitUpTo: 0))
        XCTAssertTrue(waitUntil { daemon.log.contains("kept the old token keys") }, daemon.log)
        XCTAssertEqual(try daemon.connect().request("AUTH \(spare.token())"), "OK 2")
    }

    func test_flagsAndFiles_refusedAsTheContractSays() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let audienceAlone = try runProcess(Binaries.daemon, ["--token-audience", "x", "--listen", "127.0.0.1:0", "--state", "none"])
        XCTAssertEqual(audienceAlone.status, 64, audienceAlone.stderr)
        let seed = Base64URL.encode(Array(repeating: UInt8(5), count: 32))
        let privateLine = try dir.write("private", "# minting side\nk ed25519-private \(seed)\n")
        let refused = try runProcess(Binaries.daemon, ["--token-keys", privateLine, "--listen", "127.0.0.1:0", "--state", "none"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("\(privateLine):2:"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains(seed), "the key is never shown")
        // Keys alone count as tokens for the loopback rule.
        let keys = try dir.write("keys", hs.daemonLine + "\n")
        chmod(keys, 0o644)
        let wide = try DaemonProcess(arguments: ["--token-keys", keys, "--listen", "0.0.0.0:0"], state: "none")
        defer { wide.stop() }
        XCTAssertTrue(waitUntil { wide.log.contains("token keys file \(keys) may be read by others") }, wide.log)
    }

    func test_cliMintedTokensAndLinks_areAcceptedByTheDaemon() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let signing = dir.file("signing")
        let keygen = try runProcess(Binaries.client, ["keygen", "--kid", "desk", signing])
        XCTAssertEqual(keygen.status, 0, keygen.stderr)
        var info = stat()
        XCTAssertEqual(stat(signing, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertTrue(keygen.stdout.hasPrefix("desk ed25519 "))
        XCTAssertEqual(try runProcess(Binaries.client, ["keygen", "--kid", "desk", signing]).status, 1, "never overwrites")
        let hsFile = dir.file("hs")
        let hsKeygen = try runProcess(Binaries.client, ["keygen", "--kid", "shared", "--alg", "hs256", hsFile])
        let keys = try dir.write("keys", keygen.stdout + hsKeygen.stdout)
        chmod(keys, 0o600)
        let daemon = try DaemonProcess(arguments: ["--token-keys", keys], state: "none")
        defer { daemon.stop() }

        let minted = try runProcess(Binaries.client, ["token", "--signing-key", signing, "--role", "view", "--rooms", "hall,lobby",
                                                      "--name", "wall-2", "--ttl", "45m"])
        XCTAssertEqual(minted.status, 0, minted.stderr)
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("AUTH \(minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines))"), "OK 0")
        let whoami = try client.request("WHOAMI").split(separator: " ")
        XCTAssertEqual(whoami[2...4], ["wall-2", "view", "hall,lobby"])
        let expiry = Double(whoami[5]) ?? 0
        XCTAssertEqual(expiry, SignedTokenMinter.now + 2700, accuracy: 10)

        let link = try runProcess(Binaries.client, ["link", "--signing-key", hsFile, "--url", "http://127.0.0.1:\(daemon.port)/",
                                                    "--room", "hall", "--display", "--name", "wall-3", "--no-qr"])
        XCTAssertEqual(link.status, 0, link.stderr)
        XCTAssertEqual(link.stderr, "", "loopback http draws no warning")
        let prefix = "http://127.0.0.1:\(daemon.port)/?room=hall&display&name=wall-3#token="
        XCTAssertTrue(link.stdout.hasPrefix(prefix), link.stdout)
        let linkToken = String(link.stdout.dropFirst(prefix.count)).trimmingCharacters(in: .whitespacesAndNewlines)
        let viewer = try daemon.connect()
        XCTAssertEqual(try viewer.request("AUTH \(linkToken)"), "OK 0")
        XCTAssertTrue(try viewer.request("WHOAMI").contains(" wall-3 view hall "))

        let qr = try runProcess(Binaries.client, ["link", "--signing-key", signing, "--url", "http://192.0.2.7:7878", "--room", "hall", "--qr"])
        XCTAssertEqual(qr.status, 0)
        XCTAssertTrue(qr.stderr.contains("plain http://"), qr.stderr)
        let lines = qr.stdout.split(separator: "\n")
        XCTAssertGreaterThan(lines.count, 20, "a QR code follows the link")
        XCTAssertTrue(lines.dropFirst().allSatisfy { $0.allSatisfy { "█▀▄ ".contains($0) } })
        let bad = try runProcess(Binaries.client, ["token", "--signing-key", signing, "--role", "view", "--rooms", "*", "--ttl", "8x"])
        XCTAssertEqual(bad.status, 64)
    }
}
