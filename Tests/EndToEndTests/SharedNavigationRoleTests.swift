import Foundation
import Glibc
import NavSyncKit
import XCTest

/// NavSyncKit and grants: `role` from WHOAMI, a viewer's mutation
/// throws the daemon's `forbidden`, a revoked token fails the object.
@MainActor
final class SharedNavigationRoleTests: XCTestCase {
    func test_role_viewAndControl_andAViewersMutationThrowsForbidden() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let grants = try dir.write("grants", DaemonGrantsTests.grantsText)
        chmod(grants, 0o600)
        let daemon = try DaemonProcess(arguments: ["--tokens", grants], state: "none")
        defer { daemon.stop() }
        let address = "127.0.0.1:\(daemon.port)"
        let viewer = SharedNavigation<NavEntry>(connect: address, token: DaemonGrantsTests.screen)
        XCTAssertEqual(viewer.role, .view, "before start")
        try await viewer.start()
        XCTAssertEqual(viewer.role, .view)
        let presenter = SharedNavigation<NavEntry>(connect: address, token: DaemonGrantsTests.presenter)
        try await presenter.start()
        XCTAssertEqual(presenter.role, .control)
        do {
            try await viewer.push(NavEntry("blue"))
            XCTFail("a viewer's push was accepted")
        } catch NavSyncError.server(let code, _) {
            XCTAssertEqual(code, "forbidden")
        }
        try await presenter.push(NavEntry("blue"))
        await eventually("the viewer follows") { viewer.revision == 1 }

        // The screen's token is revoked: the object fails and does not retry.
        try DaemonGrantsTests.grantsText.replacingOccurrences(of: "view * \(DaemonGrantsTests.screen)\n", with: "")
            .write(toFile: grants, atomically: true, encoding: .utf8)
        XCTAssertNil(daemon.signal(SIGHUP, waitUpTo: 0))
        await eventually("the viewer failed") {
            if case .failed(let reason) = viewer.connection { return reason.contains("forbidden token revoked") }
            return false
        }
        XCTAssertEqual(presenter.connection, .connected)
        await viewer.stop()
        await presenter.stop()
    }

    func test_role_withoutTokens_isControl() async throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let object = SharedNavigation<NavEntry>(connect: "127.0.0.1:\(daemon.port)")
        try await object.start()
        XCTAssertEqual(object.role, .control)
        await object.stop()
    }
}
