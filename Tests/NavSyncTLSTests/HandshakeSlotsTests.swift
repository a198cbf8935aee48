import NavSyncCore
import NavSyncTLS
import XCTest

/// `--max-handshakes`: the slots alone, with numbers for handshakes.
final class HandshakeSlotsTests: XCTestCase {
    private func address(_ n: UInt32) -> PeerAddress { .ipv4(0x7f00_0000 + n) }

    func test_handshakeSlots_oneAddress_getsAnEighth_theRestRefused() {
        var slots = HandshakeSlots(capacity: 256)
        XCTAssertEqual(slots.perAddress, 32)
        for key in 0..<32 { XCTAssertEqual(slots.admit(UInt64(key), from: address(1)), .admitted(evicting: nil)) }
        XCTAssertEqual(slots.admit(32, from: address(1)), .refused)
        XCTAssertEqual(slots.count, 32)
        XCTAssertEqual(slots.admit(33, from: address(2)), .admitted(evicting: nil), "another address has its own share")
        slots.finished(5)
        XCTAssertEqual(slots.admit(34, from: address(1)), .admitted(evicting: nil), "a finished handshake frees its share")
    }

    func test_handshakeSlots_beyondTheTotal_theOldestGivesWay() {
        var slots = HandshakeSlots(capacity: 16)
        XCTAssertEqual(slots.perAddress, 2)
        for key in 0..<16 { XCTAssertEqual(slots.admit(UInt64(key), from: address(UInt32(key / 2))), .admitted(evicting: nil)) }
        slots.finished(0)
        slots.finished(1)
        XCTAssertEqual(slots.admit(100, from: address(50)), .admitted(evicting: nil))
        XCTAssertEqual(slots.admit(101, from: address(50)), .admitted(evicting: nil))
        // Full: 0 and 1 finished, so 2 is the oldest in progress.
        XCTAssertEqual(slots.admit(102, from: address(51)), .admitted(evicting: 2))
        XCTAssertEqual(slots.admit(103, from: address(51)), .admitted(evicting: 3))
        XCTAssertEqual(slots.count, 16)
        // Its address's share was freed with it.
        XCTAssertEqual(slots.admit(104, from: address(1)), .admitted(evicting: 4))
    }

    func test_handshakeSlots_aSmallTotal_stillLetsEachAddressHaveOne() {
        var slots = HandshakeSlots(capacity: 3)
        XCTAssertEqual(slots.perAddress, 1)
        XCTAssertEqual(slots.admit(1, from: .local), .admitted(evicting: nil))
        XCTAssertEqual(slots.admit(2, from: .local), .refused)
    }

    func test_handshakeSlots_manyFinished_keepsItsOrderBounded() {
        var slots = HandshakeSlots(capacity: 4)
        for key in 0..<10_000 {
            XCTAssertEqual(slots.admit(UInt64(key), from: address(UInt32(key % 4))), .admitted(evicting: nil))
            slots.finished(UInt64(key))
        }
        XCTAssertEqual(slots.count, 0)
        for key in 10_000..<10_004 { _ = slots.admit(UInt64(key), from: address(UInt32(key))) }
        XCTAssertEqual(slots.admit(20_000, from: address(9)), .admitted(evicting: 10_000))
    }
}
