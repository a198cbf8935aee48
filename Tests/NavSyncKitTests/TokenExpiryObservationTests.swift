import Foundation
import NavSyncClient
import NavSyncCore
@testable import NavSyncKit
@testable import navsync_abc
import XCTest

/// `tokenExpiry` from WHOAMI's sixth field, and an expired token failing
/// the object, without a daemon.
@MainActor
final class TokenExpiryObservationTests: XCTestCase {
    private let start = RoomState(try! Route.decode("/viewA").get(), revision: 0)

    func test_tokenExpiry_followsWhoami_andIsNilForAStaticToken() {
        let navigation = SharedNavigation<ABCScreen>()
        navigation.beginWithoutEngineForTesting()
        XCTAssertNil(navigation.tokenExpiry)
        navigation.receive([.identity(Identity(id: "1", name: "wall-1", role: "view", rooms: "hall", expires: 1_767_225_600)),
                            .snapshot(start, .connected), .link(.live)], from: 0)
        XCTAssertEqual(navigation.tokenExpiry, Date(timeIntervalSince1970: 1_767_225_600))
        XCTAssertEqual(navigation.connection, .connected)
        navigation.receive([.identity(Identity(id: "1", name: "wall-1", role: "view", rooms: "hall"))], from: 0)
        XCTAssertNil(navigation.tokenExpiry, "a static token has no expiry")
    }

    func test_expiredToken_failsTheObject_withTheDaemonsLine() {
        let navigation = SharedNavigation<ABCScreen>()
        navigation.beginWithoutEngineForTesting()
        navigation.receive([.snapshot(start, .connected), .link(.live)], from: 0)
        let line = "ERR forbidden token expired"
        navigation.receive([.serverError(ServerError(code: "forbidden", message: "token expired", line: line))], from: 0)
        XCTAssertEqual(navigation.connection, .failed(line))
    }

    func test_renew_whenNotRunning_throwsNotRunning_andABadTokenInvalidData() async {
        let navigation = SharedNavigation<ABCScreen>()
        do {
            try await navigation.renew(token: "abc")
            XCTFail("renewed while idle")
        } catch NavSyncError.notRunning {
        } catch {
            XCTFail("\(error)")
        }
        do {
            try await navigation.renew(token: "two words")
            XCTFail("a token with a blank was accepted")
        } catch NavSyncError.invalidData {
        } catch {
            XCTFail("\(error)")
        }
    }
}
