import ChildProcessHarness
import Foundation
import Glibc
import TLSCertificateHarness
import XCTest

/// `--max-handshakes`: half-open TLS handshakes cannot take every
/// client slot. One address gets an eighth of the slots, the rest of its
/// connections are closed at once; past the total, the oldest handshake in
/// progress makes room, so an honest client is answered while the flood
/// still holds its connections open.
final class TLSHandshakeCapTests: XCTestCase {
    private var certs: TestCertificates { TestCertificates.shared }

    private func tlsDaemon(_ extra: [String]) throws -> DaemonProcess {
        try DaemonProcess(arguments: ["--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0",
                                      "--tls-cert", certs.serverCertificate, "--tls-key", certs.serverKey] + extra,
                          state: "none")
    }

    private func refusedCount(_ daemon: DaemonProcess) throws -> Int {
        let stats = try daemon.connect().requestList("STATS")
        return stats.first { $0.hasPrefix("STAT tls_handshakes_refused ") }.flatMap { Int($0.split(separator: " ")[2]) } ?? -1
    }

    func test_handshakeCap_500HalfOpenHandshakes_anHonestClientIsAnswered() throws {
        // As the issue found it: 500 connections would be every client slot.
        let daemon = try tlsDaemon(["--max-clients", "500", "--log-level", "warn"])
        defer { daemon.stop() }
        var flood: [LineClient] = []
        defer { for peer in flood { peer.close() } }
        // 20 addresses, 25 each: within each address's share (32 of 256),
        // so it is the total that turns them away, oldest first.
        for source in 10..<30 {
            for _ in 0..<25 { flood.append(try LineClient(port: daemon.tlsPort, source: "127.0.0.\(source)")) }
        }
        // Bounded well inside the 10 s handshake bound, so the flood's
        // connections are all still held when the honest client comes.
        XCTAssertTrue(try waitUntil(timeout: 6) { try self.refusedCount(daemon) >= 500 - 256 },
                      "refused: \((try? refusedCount(daemon)) ?? -1)")
        // The flood still holds all 500 sockets open; an honest client gets in.
        let honest = try TLSPeer.run("lines", port: daemon.tlsPort, ca: certs.caFile, ["PING honest"])
        XCTAssertTrue(honest.stdout.hasSuffix("PONG honest\n"), honest.stdout + honest.stderr)
        XCTAssertEqual(try refusedCount(daemon), 500 - 256 + 1, "the honest client took the oldest's slot")
        // The oldest were closed at once, without waiting for the 10 s bound.
        XCTAssertNoThrow(try flood[0].readUntilClosed(timeout: 5))
        let rss = daemon.residentKiB
        print("tls handshake cap: 500 half-open from 20 addresses, \(try refusedCount(daemon)) closed; daemon RSS \(rss) KiB")
    }

    func test_handshakeCap_oneAddress_getsAnEighth_theRestClosedAtOnce_anotherAddressAnswered() throws {
        let daemon = try tlsDaemon(["--max-handshakes", "64", "--log-level", "warn"])
        defer { daemon.stop() }
        var peers: [LineClient] = []
        defer { for peer in peers { peer.close() } }
        for _ in 0..<40 { peers.append(try LineClient(port: daemon.tlsPort, source: "127.0.0.2")) }
        XCTAssertTrue(try waitUntil(timeout: 10) { try self.refusedCount(daemon) == 40 - 8 })
        // The first eight hold their slots; the others were closed before any cryptography.
        for peer in peers[8...] { XCTAssertNoThrow(try peer.readUntilClosed(timeout: 5)) }
        _ = peers[0].staysQuiet(for: 0.2)
        XCTAssertFalse(peers[0].isClosedByPeer)
        let honest = try TLSPeer.run("lines", port: daemon.tlsPort, ca: certs.caFile, ["PING other address"])
        XCTAssertTrue(honest.stdout.hasSuffix("PONG other address\n"), honest.stdout + honest.stderr)
        XCTAssertEqual(try refusedCount(daemon), 32)
    }
}
