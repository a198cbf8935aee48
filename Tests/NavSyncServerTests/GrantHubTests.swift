import XCTest
import NavSyncCore
@testable import NavSyncServer

/// Grants in the hub: AUTH picks one, a second AUTH replaces it, a
/// reload revokes or changes it, WHOAMI shows it, and nothing about a room
/// outside it is told.
final class GrantHubTests: XCTestCase {
    static let presenter = "presenter-token-0001"
    static let kiosk = "kiosk-token-00000001"
    static let lobbyDesk = "lobby-desk-token-001"
    static let grants: [GrantsFile.Entry] = [
        .init(token: presenter, grant: Grant(role: .control, rooms: .every, name: "ada")),
        .init(token: kiosk, grant: Grant(role: .view, rooms: .every, name: "view")),
        .init(token: lobbyDesk, grant: Grant(role: .control, rooms: .only(["lobby"]), name: "desk")),
    ]

    private func hub(anonymous: Role? = nil) throws -> Hub {
        try Hub(grants: Self.grants, anonymous: anonymous)
    }

    func test_whoami_beforeAndAfterAuth() throws {
        let hub = try hub()
        let client = hub.connect()
        XCTAssertEqual(client.run("WHOAMI"), ["YOU 1 anon none -"])
        XCTAssertEqual(client.run("AUTH \(Self.kiosk)", "WHOAMI"), ["OK 0", "YOU 1 view view *"])
        XCTAssertEqual(client.run("AUTH \(Self.lobbyDesk)", "WHOAMI"), ["OK 0", "YOU 1 desk control lobby"])
    }

    func test_whoami_withoutTokens_isAnonymousControl() throws {
        let hub = try Hub()
        XCTAssertEqual(hub.connect().run("WHOAMI"), ["YOU 1 anon control *"])
    }

    func test_viewer_readsAndWatches_butEveryChangeIsForbidden() throws {
        let hub = try hub()
        let presenter = hub.connect(), viewer = hub.connect()
        presenter.run("AUTH \(Self.presenter)")
        XCTAssertEqual(viewer.run("AUTH \(Self.kiosk)", "WATCH"), ["OK 0", "STATE 0 /red"])
        XCTAssertEqual(presenter.run("SELECT green"), ["OK 1"])
        XCTAssertEqual(viewer.newLines(), ["EVENT 1 select /green"])
        let refused = viewer.run("SELECT blue", "SELECT nosuch", "IF 1 POP", "POP x")
        XCTAssertEqual(refused.count, 4)
        XCTAssertTrue(refused.allSatisfy { $0.hasPrefix("ERR forbidden ") }, "\(refused)")
        XCTAssertEqual(viewer.run("GET", "STATS").first, "STATE 1 /green")
        XCTAssertEqual(hub.server.roomStates["main"]?.revision, 1)
    }

    func test_listGrant_startsInMain_outsideIt_revisionsAreZero() throws {
        let hub = try hub()
        let presenter = hub.connect()
        presenter.run("AUTH \(Self.presenter)", "SELECT green", "JOIN lobby", "PUSH blue")
        let desk = hub.connect()
        XCTAssertEqual(desk.run("AUTH \(Self.lobbyDesk)"), ["OK 0"])
        XCTAssertEqual(desk.run("UNWATCH"), ["OK 0"])
        for line in ["GET", "WATCH", "SELECT red", "STATS", "JOIN main", "JOIN bad!"] {
            let reply = desk.run(line)
            XCTAssertEqual(reply.count, 1, line)
            XCTAssertTrue(reply[0].hasPrefix("ERR forbidden "), "\(line): \(reply)")
        }
        XCTAssertEqual(desk.run("ROOMS"), ["ROOM lobby 1 /red/blue", "END"])
        XCTAssertEqual(desk.run("JOIN lobby", "UNWATCH", "GET"), ["STATE 1 /red/blue", "OK 1", "STATE 1 /red/blue"])
        // A refused JOIN stays where it was.
        let refusedJoin = desk.run("JOIN main", "GET")
        XCTAssertTrue(refusedJoin[0].hasPrefix("ERR forbidden "), refusedJoin[0])
        XCTAssertEqual(refusedJoin.dropFirst(), ["STATE 1 /red/blue"])
    }

    func test_secondAuth_replacesTheGrant_andARoomLostWhileWatchingIsSaidOnce() throws {
        let hub = try hub()
        let client = hub.connect()
        XCTAssertEqual(client.run("AUTH \(Self.presenter)", "SELECT green", "WATCH"), ["OK 0", "OK 1", "STATE 1 /green"])
        XCTAssertEqual(client.run("AUTH \(Self.lobbyDesk)"), ["OK 0", "ERR forbidden room revoked"])
        XCTAssertEqual(hub.server.rooms.watchersTotal, 0)
        XCTAssertFalse(client.connection.isClosed)
        XCTAssertEqual(client.run("JOIN lobby", "WATCH"), ["STATE 0 /red", "STATE 0 /red"])
        // A failed AUTH keeps the grant held.
        XCTAssertEqual(client.run("AUTH wrong-token-000000", "WHOAMI"), ["ERR auth-failed wrong token", "YOU 1 desk control lobby"])
        // Back to a grant that covers the room: no unasked line.
        XCTAssertEqual(client.run("AUTH \(Self.kiosk)"), ["OK 0"])
    }

    func test_anonymousView_watchesEverywhere_steersNowhere_untilAuth() throws {
        let hub = try hub(anonymous: .view)
        let client = hub.connect()
        XCTAssertEqual(client.run("WHOAMI", "GET"), ["YOU 1 anon view *", "STATE 0 /red"])
        XCTAssertTrue(client.run("PUSH blue")[0].hasPrefix("ERR forbidden "))
        XCTAssertEqual(client.run("AUTH \(Self.presenter)", "PUSH blue"), ["OK 0", "OK 1"])
    }

    func test_reload_revokedTokenIsToldAndClosed_changedGrantAppliesAtOnce() throws {
        let hub = try hub()
        let revoked = hub.connect(), changed = hub.connect(), kept = hub.connect(), anonymous = hub.connect()
        revoked.run("AUTH \(Self.presenter)", "WATCH")
        changed.run("AUTH \(Self.kiosk)", "WATCH")
        kept.run("AUTH \(Self.lobbyDesk)", "JOIN lobby", "WATCH")
        let newGrants: [GrantsFile.Entry] = [
            .init(token: Self.kiosk, grant: Grant(role: .view, rooms: .only(["lobby"]), name: "view")),
            .init(token: Self.lobbyDesk, grant: Grant(role: .control, rooms: .only(["lobby"]), name: "desk")),
        ]
        let outcome = hub.server.reload(grants: newGrants)
        XCTAssertEqual(outcome.revoked, 1)
        XCTAssertEqual(outcome.changed, 1)
        hub.flush()
        XCTAssertEqual(revoked.newLines(), ["ERR forbidden token revoked"])
        XCTAssertEqual(revoked.connection.calls.last, "closeAfterSending")
        XCTAssertEqual(changed.newLines(), ["ERR forbidden room revoked"])
        XCTAssertFalse(changed.connection.isClosed)
        XCTAssertEqual(changed.run("WHOAMI"), ["YOU 2 view view lobby"])
        XCTAssertEqual(kept.newLines(), [])
        XCTAssertEqual(anonymous.newLines(), [])
        XCTAssertTrue(hub.logged("token revoked by a reload"))
        // The old token is gone for new connections too.
        XCTAssertEqual(hub.connect().run("AUTH \(Self.presenter)"), ["ERR auth-failed wrong token"])
    }

    func test_authFailures_areCounted_andLoggedOnceASecondWithoutTheToken() throws {
        let hub = try hub()
        let a = hub.connect(peer: "10.0.0.7:5000"), b = hub.connect(peer: "10.0.0.8:6000")
        a.run("AUTH secret-guess-000001", "AUTH secret-guess-000002")
        b.run("AUTH secret-guess-000003")
        let warnings = hub.logLines.filter { $0.0 == .warn }.map(\.1)
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertTrue(warnings[0].contains("10.0.0.7:5000"), warnings[0])
        hub.clock = 1
        b.run("AUTH secret-guess-000004")
        let later = hub.logLines.filter { $0.0 == .warn }.map(\.1)
        XCTAssertEqual(later.count, 2)
        XCTAssertTrue(later[1].contains("10.0.0.8:6000") && later[1].contains("3 failures"), later[1])
        XCTAssertFalse(hub.logLines.contains { $0.1.contains("secret-guess") })
        let admin = hub.connect()
        admin.run("AUTH \(Self.presenter)")
        XCTAssertEqual(admin.stats()["auth_failures"], "4")
        XCTAssertTrue(hub.server.metricsText().contains("navsync_auth_failures_total 4"))
    }

    func test_tokenFile_isTheOneGrantControlEverywhere() throws {
        let hub = try Hub(token: "s3cret")
        let client = hub.connect()
        XCTAssertEqual(client.run("AUTH s3cret", "WHOAMI", "STATS").prefix(2), ["OK 0", "YOU 1 control control *"])
    }
}
