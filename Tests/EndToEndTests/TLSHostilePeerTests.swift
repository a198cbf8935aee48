import Foundation
import Glibc
import TLSCertificateHarness
import XCTest

/// Hostile peers on a TLS listener: the plain listener's bounds hold inside
/// TLS, counted on the ciphertext the daemon has queued, and a peer that
/// stops mid-handshake costs what OpenSSL holds for a handshake (a 16 KiB
/// message buffer, one partial record, the connection) until the bound.
final class TLSHostilePeerTests: XCTestCase {
    private var certs: TestCertificates { TestCertificates.shared }

    private func tlsDaemon(_ extra: [String] = []) throws -> DaemonProcess {
        try DaemonProcess(arguments: ["--tls-listen", "127.0.0.1:0", "--tls-cert", certs.serverCertificate,
                                      "--tls-key", certs.serverKey, "--log-level", "warn"] + extra, state: "none")
    }

    func test_pipelinerOverTLSThatNeverReads_memoryBounded_everyReplyLater() throws {
        let daemon = try tlsDaemon(["--max-pending", String(256 << 10)])
        let flag = certs.directory + "/read-now-" + UUID().uuidString
        let baselineKiB = daemon.residentKiB
        var sampler = HostileClientTests.RSSSampler(pid: daemon.pid)
        sampler.start()
        let peer = try StreamingProcess(TLSPeer.python, ["-c", TLSPeer.script, "flood", "\(daemon.tlsPort)", certs.caFile,
                                                         "127.0.0.1", "GET", "1", flag])
        defer { peer.stop() }
        let sentLine = peer.waitForLines(2, timeout: 20).last ?? ""
        let other = try TLSPeer.run("lines", port: daemon.tlsPort, ca: certs.caFile, ["PING meanwhile"])
        let peakKiB = sampler.stop()
        XCTAssertTrue(other.stdout.hasSuffix("PONG meanwhile\n"), other.stdout + other.stderr)
        XCTAssertTrue(sentLine.hasPrefix("SENT "), sentLine + peer.stderr)
        let sent = Int(sentLine.dropFirst(5)) ?? -1
        FileManager.default.createFile(atPath: flag, contents: Data())
        let read = peer.waitForLines(3, timeout: 60).last ?? ""
        XCTAssertEqual(read, "READ \(sent) STATE 0 /red", "every GET sent was answered, in full: \(peer.stderr)")
        print("tls pipeliner: \(sent) GETs unread for 1 s; daemon RSS \(baselineKiB) KiB before, peak \(peakKiB) KiB",
              "(+\(peakKiB - baselineKiB) KiB)")
        XCTAssertGreaterThan(sent, 100_000, "the flood was a flood")
        if !Hardening.sanitized {
            XCTAssertLessThan(peakKiB - baselineKiB, 16 * 1024, "memory stays bounded")
        }
    }

    /// The budget for a TLS watcher that has nothing to do: OpenSSL
    /// frees its record buffers while idle (SSL_MODE_RELEASE_BUFFERS) and the
    /// engine swaps out memory BIOs that grew, so what stays is the
    /// connection's own state.
    func test_idleTLSWatchers_costUnder12KiBEach() throws {
        let daemon = try tlsDaemon()
        let flag = certs.directory + "/let-go-" + UUID().uuidString
        let count = 500
        let baselineKiB = daemon.residentKiB
        let peer = try StreamingProcess(TLSPeer.python, ["-c", TLSPeer.script, "idle", "\(daemon.tlsPort)", certs.caFile,
                                                         "127.0.0.1", "\(count)", flag])
        defer { peer.stop() }
        XCTAssertEqual(peer.waitForLines(2, timeout: 60).last, "READY", peer.stderr)
        let heldKiB = daemon.residentKiB - baselineKiB
        FileManager.default.createFile(atPath: flag, contents: Data())
        print("tls idle watchers: \(count) hold +\(heldKiB) KiB, \(heldKiB * 1024 / count) B each")
        if !Hardening.sanitized {
            // ~6 KiB measured once the SSL object goes after the handshake
            // (~20 KiB while it stayed); the 8 KiB goal is the benchmark's
            // (docs/PERFORMANCE.md), this bound leaves room for RSS jitter.
            XCTAssertLessThan(heldKiB * 1024 / count, 12 * 1024)
        }
    }

    func test_manyHandshakesStoppedMidRecord_costBoundedEach_thenClosed() throws {
        let daemon = try tlsDaemon()
        let baselineKiB = daemon.residentKiB
        // A handshake record header promising 16 KiB, and 15 KiB of it.
        let partial = [0x16, 0x03, 0x01, 0x40, 0x00] + [UInt8](repeating: 0x01, count: 15 << 10)
        var peers: [LineClient] = []
        defer { for peer in peers { peer.close() } }
        // From eight addresses, 25 each: within each one's share of
        // --max-handshakes, so all 200 are held; the other client below
        // comes from 127.0.0.1, whose share is untouched.
        for index in 0..<200 {
            let peer = try LineClient(port: daemon.tlsPort, source: "127.0.0.\(10 + index % 8)")
            peer.sendBytes(partial)
            peers.append(peer)
        }
        let other = try TLSPeer.run("lines", port: daemon.tlsPort, ca: certs.caFile, ["PING meanwhile"])
        XCTAssertTrue(other.stdout.hasSuffix("PONG meanwhile\n"), other.stdout)
        let heldKiB = daemon.residentKiB - baselineKiB
        print("tls stalled handshakes: 200 peers mid-record hold +\(heldKiB) KiB")
        if !Hardening.sanitized {
            // Per peer: OpenSSL's handshake buffer (16 KiB), the record
            // buffer holding the partial record (~17 KiB), the connection's
            // own state; measured ~62 KiB. 64 KiB each, and slack.
            XCTAssertLessThan(heldKiB, 200 * 64 + 4096)
        }
        for peer in peers { XCTAssertNoThrow(try peer.readUntilClosed(timeout: 20)) }
    }

    /// A room of screens reconnecting: 1,000 handshakes, 200 at a time.
    /// Each holds ~60 KiB while it runs; what they leave free lies between
    /// the connections that stayed, where glibc's heap does not shrink on
    /// its own. With this burst a release daemon measured 10.5 KB per
    /// watcher before it trimmed its heap, 6.6-7.6 KB after. The 8 KiB goal
    /// is the benchmark's (docs/PERFORMANCE.md); this bound leaves room for
    /// RSS jitter and still fails without the trim.
    func test_idleTLSWatchers_connectedInABurst_costUnder9KiBEach() throws {
        // A plain listener too, for STATS; no per-address handshake share in the way.
        let daemon = try tlsDaemon(["--listen", "127.0.0.1:0", "--max-handshakes", "80000"])
        let flag = certs.directory + "/let-go-" + UUID().uuidString
        let count = 1_000
        let baselineKiB = daemon.residentKiB
        let peer = try StreamingProcess(TLSPeer.python, ["-c", TLSPeer.script, "burst", "\(daemon.tlsPort)", certs.caFile,
                                                         "127.0.0.1", "\(count - 1)", "200", flag])
        defer {
            FileManager.default.createFile(atPath: flag, contents: Data())
            peer.stop()
        }
        XCTAssertEqual(peer.waitForLines(2, timeout: 90).last, "READY \(count - 1)", peer.stderr)
        // The trim comes once the burst has been quiet a moment, 2 s after it
        // at the latest (HeapTrimSchedule) by the daemon's loop, which a
        // loaded machine runs late: a bound, not the schedule.
        let deadline = Date().addingTimeInterval(20)
        var trims = 0
        while Date() < deadline {
            trims = Int(try statsFigure(daemon, "heap_trims") ?? "") ?? 0
            if trims > 0 { break }
            usleep(20_000)
        }
        usleep(300_000)
        let heldKiB = daemon.residentKiB - baselineKiB
        print("tls idle watchers after a burst: \(count) hold +\(heldKiB) KiB, \(heldKiB * 1024 / count) B each,",
              "\(trims) heap trims")
        XCTAssertGreaterThan(trims, 0, "a burst of handshakes is followed by a heap trim")
        // ASan's allocator is not glibc's: there it is only reported.
        if !Hardening.sanitized {
            XCTAssertLessThan(heldKiB * 1024 / count, 9 * 1024)
        }
    }

    private func statsFigure(_ daemon: DaemonProcess, _ key: String) throws -> String? {
        let client = try daemon.connect()
        defer { client.close() }
        return try client.requestList("STATS").first { $0.hasPrefix("STAT \(key) ") }?.split(separator: " ")[2].description
    }
}
