import ChildProcessHarness
import Foundation
import TLSCertificateHarness
import XCTest

/// Many TLS watchers at once: each watcher's records are sealed and handed
/// to its socket as they are made (issue 33), and a record the kernel does
/// not take at once is queued; every watcher must still read exactly the
/// room's events, whole and in order, through a burst and a closed loop.
final class TLSFanOutTests: XCTestCase {
    private var certs: TestCertificates { TestCertificates.shared }

    func test_thousandTLSWatchers_burstThenClosedLoop_everyEventInOrder() throws {
        let daemon = try DaemonProcess(arguments: ["--tls-listen", "127.0.0.1:0", "--tls-cert", certs.serverCertificate,
                                                   "--tls-key", certs.serverKey, "--max-clients", "2000",
                                                   "--log-level", "warn"], state: "none")
        defer { daemon.stop() }
        let watchers = 1_000, burst = 100, rounds = 20
        let result = try TLSPeer.run("fanout", port: daemon.tlsPort, ca: certs.caFile,
                                     ["\(watchers)", "\(burst)", "\(rounds)"], timeout: 240)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        let last = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertEqual(last, "FANOUT \(watchers) \(burst + rounds)", result.stdout + result.stderr + daemon.log)
    }
}
