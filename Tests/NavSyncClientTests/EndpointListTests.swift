import NavSyncClient
import NavSyncCore
import XCTest

final class EndpointListTests: XCTestCase {
    func test_parseList_readsEveryFormInOrder() throws {
        let list = try Endpoint.parseList("127.0.0.1:7878, [::1]:7879,unix:/run/n.sock", source: "--connect")
        XCTAssertEqual(list, [.tcp(host: "127.0.0.1", port: 7878), .tcp(host: "::1", port: 7879),
                              .unix(path: "/run/n.sock")])
    }

    func test_parseList_singleAddress_isAListOfOne() throws {
        XCTAssertEqual(try Endpoint.parseList("localhost:1", source: "x"), [.tcp(host: "localhost", port: 1)])
    }

    func test_parseList_refusesEmptyItemsAndBadAddresses() {
        for bad in ["", ",", "127.0.0.1:7878,", "127.0.0.1:7878,,127.0.0.1:7879", "127.0.0.1:99999", "unix:"] {
            XCTAssertThrowsError(try Endpoint.parseList(bad, source: "--connect"), "\(bad)")
        }
    }

    func test_parse_tlsAddresses_keepTheHostAsWrittenAndPrintBack() throws {
        let list = try Endpoint.parseList("tls://nav.example:7443,tls://[::1]:7443,127.0.0.1:7878", source: "--connect")
        XCTAssertEqual(list, [.tls(host: "nav.example", port: 7443), .tls(host: "::1", port: 7443),
                              .tcp(host: "127.0.0.1", port: 7878)])
        XCTAssertEqual(list.map(\.description), ["tls://nav.example:7443", "tls://[::1]:7443", "127.0.0.1:7878"])
        for bad in ["tls://", "tls://nav.example", "tls://nav.example:0", "tls://unix:/run/n.sock"] {
            XCTAssertThrowsError(try Endpoint.parse(bad, source: "--connect"), bad)
        }
    }
}
