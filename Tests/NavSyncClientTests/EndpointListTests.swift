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
}
