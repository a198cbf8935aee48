import NavSyncCore

/// The guessing throttle (PROTOCOL.md *Guessing*): an address is
/// throttled while more than `guessesAllowed` of its guesses fall within
/// the last `windowMilliseconds`. While it is, its tokens are not checked
/// at all, so it learns nothing from them and costs no comparison.
///
/// A pure type: the time is passed in (the daemon's is libuv's loop clock,
/// the tests' their own), so every rule is tested without waiting.
///
/// Memory is bounded twice: an address keeps at most `guessesAllowed + 1`
/// times (a throttled attempt is not a guess, so no more can fall in the
/// window), and at most `addressesTracked` addresses are kept, the one that
/// guessed least recently forgotten first. About 250 bytes an address: at
/// most ~16 MiB under a flood of addresses, in O(1) per guess.
public struct GuessThrottle {
    public static let defaultGuessesAllowed = 20
    public static let defaultWindowMilliseconds: UInt64 = 10_000
    public static let defaultAddressesTracked = 65_536

    public let guessesAllowed: Int
    public let windowMilliseconds: UInt64
    public let addressesTracked: Int

    private struct Entry {
        var address: PeerAddress
        /// Times of its last guesses, oldest first; at most `guessesAllowed + 1`.
        var guesses: [UInt64]
        /// Neighbours in the recency list (slot indices, -1 at either end).
        var newer: Int
        var older: Int
    }

    private var slots: [Entry] = []
    private var slotOf: [PeerAddress: Int] = [:]
    private var newest = -1
    private var oldest = -1

    public init(guessesAllowed: Int = defaultGuessesAllowed, windowMilliseconds: UInt64 = defaultWindowMilliseconds,
                addressesTracked: Int = defaultAddressesTracked) {
        precondition(guessesAllowed >= 0 && windowMilliseconds > 0 && addressesTracked > 0)
        self.guessesAllowed = guessesAllowed
        self.windowMilliseconds = windowMilliseconds
        self.addressesTracked = addressesTracked
    }

    /// How many addresses are remembered now.
    public var trackedCount: Int { slotOf.count }

    /// Whole seconds (rounded up, at least 1) until `address` is no longer
    /// throttled; nil when its token may be checked now.
    public mutating func retryAfterSeconds(for address: PeerAddress, now: UInt64) -> Int? {
        guard let slot = slotOf[address] else { return nil }
        forgetExpired(in: slot, now: now)
        let guesses = slots[slot].guesses
        guard guesses.count > guessesAllowed else { return nil }
        // Throttled until enough of the oldest leave the window that no more
        // than `guessesAllowed` remain.
        let freedAt = guesses[guesses.count - guessesAllowed - 1] + windowMilliseconds
        let waitMilliseconds = freedAt > now ? freedAt - now : 0
        return max(1, Int((waitMilliseconds + 999) / 1000))
    }

    /// Records one guess (a token that did not verify) from `address`.
    public mutating func noteGuess(from address: PeerAddress, now: UInt64) {
        let slot = slotOf[address] ?? claimSlot(for: address)
        forgetExpired(in: slot, now: now)
        slots[slot].guesses.append(now)
        if slots[slot].guesses.count > guessesAllowed + 1 { slots[slot].guesses.removeFirst() }
        moveToNewest(slot)
    }

    private mutating func forgetExpired(in slot: Int, now: UInt64) {
        let window = windowMilliseconds
        // A time later than `now` (a clock that stepped back) counts as now.
        let stale = slots[slot].guesses.prefix { $0 <= now && now - $0 >= window }.count
        if stale > 0 { slots[slot].guesses.removeFirst(stale) }
    }

    /// A slot for a new address: a fresh one while below the bound, else the
    /// least recent address's, which is forgotten.
    private mutating func claimSlot(for address: PeerAddress) -> Int {
        let slot: Int
        if slots.count < addressesTracked {
            slot = slots.count
            slots.append(Entry(address: address, guesses: [], newer: -1, older: -1))
        } else {
            slot = oldest
            unlink(slot)
            slotOf[slots[slot].address] = nil
            slots[slot] = Entry(address: address, guesses: [], newer: -1, older: -1)
        }
        slotOf[address] = slot
        linkAsNewest(slot)
        return slot
    }

    private mutating func moveToNewest(_ slot: Int) {
        guard newest != slot else { return }
        unlink(slot)
        linkAsNewest(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (slots[slot].newer, slots[slot].older)
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
        slots[slot].newer = -1
        slots[slot].older = -1
    }

    private mutating func linkAsNewest(_ slot: Int) {
        slots[slot].older = newest
        slots[slot].newer = -1
        if newest >= 0 { slots[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }
}
