import XCTest
@testable import NavSyncCore

/// A peer as the guessing throttle counts it.
final class PeerAddressTests: XCTestCase {
    func test_peerAddress_ipv4_fromItsBytes() {
        XCTAssertEqual(PeerAddress(ipv4: [127, 0, 0, 2]), .ipv4(0x7f00_0002))
        XCTAssertEqual(PeerAddress(ipv4: [127, 0, 0, 2]).description, "127.0.0.2")
    }

    func test_peerAddress_ipv4MappedIPv6_isItsIPv4Address() {
        let mapped: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 7]
        XCTAssertEqual(PeerAddress(ipv6: mapped), PeerAddress(ipv4: [192, 0, 2, 7]))
    }

    func test_peerAddress_ipv6_countsBySlash64() {
        let a: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 1]
        let sameNetwork: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1] + [0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4]
        let otherNetwork: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 2] + [0, 0, 0, 0, 0, 0, 0, 1]
        XCTAssertEqual(PeerAddress(ipv6: a), PeerAddress(ipv6: sameNetwork))
        XCTAssertNotEqual(PeerAddress(ipv6: a), PeerAddress(ipv6: otherNetwork))
        XCTAssertEqual(PeerAddress(ipv6: a).description, "2001:db8:0:1::/64")
        // ::1 is not IPv4-mapped: its own /64, apart from 127.0.0.1.
        let loopback: [UInt8] = Array(repeating: 0, count: 15) + [1]
        XCTAssertEqual(PeerAddress(ipv6: loopback), .ipv6Network(0))
        XCTAssertNotEqual(PeerAddress(ipv6: loopback), PeerAddress(ipv4: [127, 0, 0, 1]))
    }

    func test_peerAddress_shortBytes_areLocal_neverACrash() {
        XCTAssertEqual(PeerAddress(ipv6: [1, 2, 3]), .local)
        XCTAssertEqual(PeerAddress.local.description, "unix")
    }
}
