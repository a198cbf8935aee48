import XCTest
@testable import NavSyncClient

// Filled in as the client core lands; the target needs one source to build.
final class BackoffTests: XCTestCase {
    func test_targetBuilds() {}
}
