import NavSyncClient
import NavSyncCore
import XCTest

final class ClientRequestTests: XCTestCase {
    func test_line_isTheVerbThenEachPart() {
        XCTAssertEqual(ClientRequest.select(screen: "blue", data: "hello world").line, "SELECT blue hello world")
        XCTAssertEqual(ClientRequest.push(screen: "red", data: nil).line, "PUSH red")
        XCTAssertEqual(ClientRequest.next(data: "").line, "NEXT")
        XCTAssertEqual(ClientRequest.open(route: "/red/blue:x").line, "OPEN /red/blue:x")
        XCTAssertNil(ClientRequest.select(screen: "blue", data: "tabs\tand spaces").problem)
        XCTAssertNotNil(ClientRequest.select(screen: "two words", data: nil).problem)
        XCTAssertNotNil(ClientRequest.select(screen: "", data: nil).problem)
        XCTAssertNotNil(ClientRequest.next(data: "a\r\nb").problem)
        XCTAssertNotNil(ClientRequest.open(route: "/a b").problem)
    }

    func test_guarded_isIFThenTheChange_andExpectsWhatTheChangeExpects() {
        let change = ClientRequest.guarded(revision: 12, change: .select(screen: "green", data: "x"))
        XCTAssertEqual(change.line, "IF 12 SELECT green x")
        XCTAssertEqual(change.expectation, .ok)
        XCTAssertNil(change.problem)
        XCTAssertNotNil(ClientRequest.guarded(revision: 1, change: .get).problem, "IF guards changes only")
        XCTAssertNotNil(ClientRequest.guarded(revision: 1, change: .next(data: "a\nPOP")).problem)
    }

    func test_endpoint_parse_addressesAndMistakes() throws {
        XCTAssertEqual(try Endpoint.parse("127.0.0.1:7878", source: "--connect"), .tcp(host: "127.0.0.1", port: 7878))
        XCTAssertEqual(try Endpoint.parse("[::1]:9000", source: "--connect"), .tcp(host: "::1", port: 9000))
        XCTAssertEqual(try Endpoint.parse("localhost:1", source: "--connect"), .tcp(host: "localhost", port: 1))
        XCTAssertEqual(try Endpoint.parse("unix:/tmp/n.sock", source: "$NAVSYNC_ADDR"), .unix(path: "/tmp/n.sock"))
        XCTAssertEqual(Endpoint.tcp(host: "::1", port: 9000).description, "[::1]:9000")
        for bad in ["7878", "host:", "host:0", "host:70000", "unix:", ":80"] {
            XCTAssertThrowsError(try Endpoint.parse(bad, source: "--connect"), bad)
        }
    }

    func test_line_parsesBackToItsOwnVerb() {
        let parser = CommandParser(catalog: .builtIn, maxDepth: 64)
        let requests: [ClientRequest] = [.get, .select(screen: "blue", data: "x y"), .push(screen: "green", data: nil),
                                         .pop, .root, .next(data: "n"), .open(route: "/red/blue:a"), .screens, .stats, .rooms,
                                         .ping("hi"), .guarded(revision: 7, change: .push(screen: "blue", data: "a b"))]
        for request in requests {
            guard case .success(let command)? = parser.parse(Array(request.line.utf8)) else {
                return XCTFail("\(request.line) does not parse")
            }
            XCTAssertEqual(command.verb, request.verb, request.line)
        }
    }
}
