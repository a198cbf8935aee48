import NavSyncCore

extension Array where Element == UInt8 {
    /// The bytes as text, for comparing against a literal in assertions.
    var text: String { String(decoding: self, as: UTF8.self) }
}

/// Builds a stack from its route form; the route must be well-formed.
func stack(_ route: String) -> [RouteEntry] {
    navigation(route).stack
}

/// Stack and sheets from a route such as `/red#blue`; the route must be well-formed.
func navigation(_ route: String) -> Navigation {
    switch Route.decode(route) {
    case .success(let navigation): return navigation
    case .failure(let error): fatalError("test route \(route) does not decode: \(error)")
    }
}
