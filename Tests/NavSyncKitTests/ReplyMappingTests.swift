import NavSyncClient
import NavSyncCore
@testable import NavSyncKit
import XCTest

final class ReplyMappingTests: XCTestCase {
    func test_outcome_mapsEveryReplyToTheContractsError() {
        let conflict = ServerError(code: "conflict", message: "current=12", line: "ERR conflict current=12")
        let cases: [(Reply, Bool, Result<UInt64, NavSyncError>)] = [
            (.ok(revision: 5), true, .success(5)),
            (.error(conflict), true, .failure(.server(code: "conflict", message: "current=12"))),
            (.invalid("data cannot contain a line break"), true, .failure(.invalidData("data cannot contain a line break"))),
            (.lost("the daemon closed the connection"), true, .failure(.disconnected)),
            (.lost("closed"), false, .failure(.notRunning)),
            (.unexpected("WHAT 1"), true, .failure(.server(code: "bad-reply", message: "WHAT 1"))),
            (.pong("x"), true, .failure(.server(code: "bad-reply", message: "PONG x"))),
        ]
        for (reply, running, expected) in cases {
            XCTAssertEqual(ReplyMapping.outcome(of: reply, running: running), expected, "\(reply)")
        }
    }
}
