import NavSyncCore

/// `--max-handshakes` (PROTOCOL.md *TLS*): how many TLS handshakes may
/// be in progress at once, and at most an eighth of them (at least one)
/// from one peer address. A connection beyond its address's share is
/// refused before any cryptography; one beyond the total takes the slot of
/// the oldest handshake in progress, which its holder then closes. So a
/// flood from one address cannot take the slots, and a flood from many
/// only cycles them: an honest client's handshake waits for no timeout.
///
/// A pure type: it knows keys and addresses, not sockets; the daemon keys
/// each handshake by a number of its own.
public struct HandshakeSlots {
    public let capacity: Int
    /// The most one address may hold at once.
    public let perAddress: Int

    public enum Admission: Equatable, Sendable {
        /// Its address holds its share: close the connection at once.
        case refused
        /// Go ahead; when `evicting` is set, that (oldest) handshake lost
        /// its slot and must be closed.
        case admitted(evicting: UInt64?)
    }

    /// Handshakes in progress: when each started (a sequence) and from where.
    private var holders: [UInt64: (sequence: UInt64, address: PeerAddress)] = [:]
    private var heldByAddress: [PeerAddress: Int] = [:]
    /// Keys in the order they were admitted, oldest first; may still hold
    /// keys that finished (skipped when met, compacted as they pile up).
    private var order: [(sequence: UInt64, key: UInt64)] = []
    private var orderStart = 0
    private var nextSequence: UInt64 = 0

    /// - Parameter capacity: `--max-handshakes`, at least 1.
    public init(capacity: Int) {
        precondition(capacity >= 1)
        self.capacity = capacity
        perAddress = max(1, capacity / 8)
    }

    /// Handshakes in progress.
    public var count: Int { holders.count }

    /// Asks for a slot for the handshake `key` from `address`.
    public mutating func admit(_ key: UInt64, from address: PeerAddress) -> Admission {
        guard heldByAddress[address, default: 0] < perAddress else { return .refused }
        var evicted: UInt64?
        if holders.count >= capacity, let oldest = oldestHolder() {
            finished(oldest)
            evicted = oldest
        }
        holders[key] = (nextSequence, address)
        heldByAddress[address, default: 0] += 1
        order.append((nextSequence, key))
        nextSequence += 1
        return .admitted(evicting: evicted)
    }

    /// The handshake is over (established, failed, timed out or closed);
    /// unknown keys are ignored.
    public mutating func finished(_ key: UInt64) {
        guard let holder = holders.removeValue(forKey: key) else { return }
        let left = heldByAddress[holder.address, default: 1] - 1
        heldByAddress[holder.address] = left > 0 ? left : nil
        // Finished keys stay in `order` until met; keep it within twice the live count.
        if order.count - orderStart > 2 * holders.count + 64 { compact() }
    }

    private mutating func oldestHolder() -> UInt64? {
        while orderStart < order.count {
            let entry = order[orderStart]
            if holders[entry.key]?.sequence == entry.sequence { return entry.key }
            orderStart += 1
        }
        return nil
    }

    private mutating func compact() {
        order = order[orderStart...].filter { holders[$0.key]?.sequence == $0.sequence }
        orderStart = 0
    }
}
