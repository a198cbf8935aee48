import NavSyncCore

/// SplitMix64: a tiny deterministic generator, so "random" tests fail the same
/// way on every run and every machine.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Array where Element == UInt8 {
    /// The bytes as text, for comparing against a literal in assertions.
    var text: String { String(decoding: self, as: UTF8.self) }
}

/// Builds a stack from its route form; the route must be well-formed.
func stack(_ route: String) -> [RouteEntry] {
    switch Route.decode(route) {
    case .success(let entries): return entries
    case .failure(let error): fatalError("test route \(route) does not decode: \(error)")
    }
}
