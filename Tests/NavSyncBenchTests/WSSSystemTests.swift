import XCTest
@testable import navsync_bench

/// navsync-wss: the watchers of navsync-ws (upgrade, frames) reached the way
/// navsync-tls reaches its own (the TLS port, the bench's TLS client).
final class WSSSystemTests: XCTestCase {
    func test_system_wssName_parsesAsTheWSSCase() {
        XCTAssertEqual(System(rawValue: "navsync-wss"), .navsyncWSS)
        XCTAssertEqual(System.navsyncWSS.rawValue, "navsync-wss")
    }

    func test_system_transport_wssIsWebSocketInsideTLS() {
        let table: [(System, tls: Bool, webSocket: Bool)] = [
            (.navsync, false, false),
            (.navsyncWebSocket, false, true),
            (.navsyncSSE, false, false),
            (.navsyncTLS, true, false),
            (.navsyncWSS, true, true),
            (.redis, false, false),
            (.redisTLS, true, false),
            (.nats, false, false),
            (.floor, false, false),
        ]
        XCTAssertEqual(table.count, System.allCases.count, "every system is in the table")
        for (system, tls, webSocket) in table {
            XCTAssertEqual(system.watchersOverTLS, tls, "\(system) over TLS")
            XCTAssertEqual(system.watchersOnWebSocket, webSocket, "\(system) on WebSocket")
        }
    }

    func test_subscribe_wss_isTheUpgradeThenAMaskedWatchFrame() {
        let bytes = Wire(system: .navsyncWSS).subscribe
        XCTAssertEqual(bytes, Wire(system: .navsyncWebSocket).subscribe)
        let head = Wire.upgradeRequest
        XCTAssertEqual(Array(bytes.prefix(head.count)), head)
        XCTAssertTrue(String(decoding: head, as: UTF8.self).hasPrefix("GET /ws HTTP/1.1\r\n"))
        let frame = Array(bytes.dropFirst(head.count))
        XCTAssertEqual(frame[0], 0x81, "final text frame")
        XCTAssertEqual(frame[1], 0x80 | 5, "masked, five bytes")
        let mask = Array(frame[2..<6])
        let payload = frame[6...].enumerated().map { $0.element ^ mask[$0.offset % 4] }
        XCTAssertEqual(String(decoding: payload, as: UTF8.self), "WATCH")
    }

    func test_change_wss_isASelectOnTheActorsTCPWithNoHello() {
        let wire = Wire(system: .navsyncWSS)
        XCTAssertEqual(wire.change(sequence: 3, screen: "red"), Array("SELECT red\n".utf8))
        XCTAssertEqual(wire.actorHello, [])
        XCTAssertEqual(wire.acknowledgementsPerChange, 1)
    }

    func test_watcherLine_wss_classifiesEveryFirstTwoBytesLikeWebSocket() {
        let wss = Wire(system: .navsyncWSS)
        let ws = Wire(system: .navsyncWebSocket)
        for b0 in UInt8.min...UInt8.max {
            for b1 in [UInt8(0), UInt8(ascii: "V"), UInt8(ascii: "T"), UInt8(ascii: "R"), UInt8(ascii: "K")] {
                XCTAssertEqual(wss.watcherLine(b0, b1), ws.watcherLine(b0, b1), "\(b0) \(b1)")
                XCTAssertEqual(wss.actorLine(b0, b1), ws.actorLine(b0, b1), "\(b0) \(b1)")
            }
        }
        XCTAssertEqual(wss.watcherLine(UInt8(ascii: "E"), UInt8(ascii: "V")), .event)
        XCTAssertEqual(wss.watcherLine(UInt8(ascii: "S"), UInt8(ascii: "T")), .subscribed)
        XCTAssertEqual(wss.watcherLine(UInt8(ascii: "E"), UInt8(ascii: "R")), .error)
    }

    func test_parse_wssWithoutTLSPortOrCA_isAUsageError() {
        XCTAssertThrowsError(try BenchOptions.parse(["--system", "navsync-wss"]))
        XCTAssertThrowsError(try BenchOptions.parse(["--system", "navsync-wss", "--tls-port", "9443"]))
        XCTAssertThrowsError(try BenchOptions.parse(["--system", "navsync-wss", "--tls-ca", "/tmp/ca.pem"]))
    }

    func test_parse_wssWithTLSPortAndCA_keepsThem() throws {
        let options = try BenchOptions.parse(["--system", "navsync-wss", "--port", "7000", "--tls-port", "9443",
                                              "--tls-ca", "/tmp/ca.pem", "-n", "20"])
        XCTAssertEqual(options.system, .navsyncWSS)
        XCTAssertEqual(options.port, 7000)
        XCTAssertEqual(options.tlsPort, 9443)
        XCTAssertEqual(options.tlsCA, "/tmp/ca.pem")
        XCTAssertEqual(options.watchers, 20)
    }

    func test_parse_wssWithTokens_isAUsageError() {
        XCTAssertThrowsError(try BenchOptions.parse(["--system", "navsync-wss", "--tls-port", "9443",
                                                     "--tls-ca", "/tmp/ca.pem", "--watcher-token", "t"]))
    }

    func test_usage_namesEverySystem() {
        for system in System.allCases {
            XCTAssertTrue(BenchOptions.usage.contains(system.rawValue), system.rawValue)
        }
    }
}
