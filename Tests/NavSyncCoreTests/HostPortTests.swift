import NavSyncCore
import XCTest

/// `HOST:PORT` is read in one place for `--listen`, `--connect`,
/// `$NAVSYNC_ADDR` and `redis://`; these tables pin what it accepts.
final class HostPortTests: XCTestCase {
    func test_parse_readsWholeAddresses() {
        let table: [(text: String, host: String, port: Int)] = [
            ("127.0.0.1:7878", "127.0.0.1", 7878),
            ("localhost:1", "localhost", 1),
            ("[::1]:0", "::1", 0),
            ("[::1]:65535", "::1", 65535),
            ("[fe80::1%eth0]:80", "fe80::1%eth0", 80),
            ("example.org:6379", "example.org", 6379),
            ("a:0", "a", 0),
            // Without brackets the port follows the last colon: the host keeps the rest.
            ("::1:7878", "::1", 7878),
        ]
        for row in table {
            XCTAssertEqual(HostPort.parse(row.text), .success(HostPort(host: row.host, port: row.port)), row.text)
        }
    }

    func test_parse_refusesMalformedAddressesWithTheirProblem() {
        let table: [(text: String, problem: HostPort.Problem)] = [
            ("", .noPort),
            ("nohost", .noPort),
            ("127.0.0.1", .noPort),
            ("[::1]7878", .badBrackets),
            ("[::1", .badBrackets),
            ("[::1]", .badBrackets),
            ("[::1:80", .badBrackets),
            ("127.0.0.1:", .badHostOrPort),
            (":1", .badHostOrPort),
            ("[]:1", .badHostOrPort),
            ("a:65536", .badHostOrPort),
            ("a:-1", .badHostOrPort),
            ("a:x", .badHostOrPort),
            ("a:99999999999999999999999", .badHostOrPort),
            ("[::1]:", .badHostOrPort),
            ("[::1]:port", .badHostOrPort),
            // An IPv6 address without brackets and without a port: the split leaves no number.
            ("fe80::", .badHostOrPort),
        ]
        for row in table {
            XCTAssertEqual(HostPort.parse(row.text), .failure(row.problem), row.text)
        }
    }

    func test_description_bracketsHostsWithAColon() {
        XCTAssertEqual(HostPort(host: "127.0.0.1", port: 7878).description, "127.0.0.1:7878")
        XCTAssertEqual(HostPort(host: "::1", port: 7878).description, "[::1]:7878")
        XCTAssertEqual(HostPort(host: "localhost", port: 0).description, "localhost:0")
    }

    func test_description_readsBackAsTheSameAddress() {
        for address in [HostPort(host: "10.0.0.1", port: 1), HostPort(host: "::1", port: 65535),
                        HostPort(host: "fe80::1", port: 80), HostPort(host: "host.example", port: 7878)] {
            XCTAssertEqual(HostPort.parse(address.description), .success(address), address.description)
        }
    }
}
