import NavSyncCore

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
