import NavSyncClient

/// How the state machine's answer to a mutation becomes what the mutation
/// returns or throws: the one place the library's error contract is decided.
enum ReplyMapping {
    /// `running` is false once the object is stopped or failed.
    static func outcome(of reply: Reply, running: Bool) -> Result<UInt64, NavSyncError> {
        switch reply {
        case .ok(let revision):
            return .success(revision)
        case .error(let error):
            return .failure(.server(code: error.code, message: error.message))
        case .invalid(let problem):
            return .failure(.invalidData(problem))
        case .lost:
            // Lost because the object was stopped is a caller's matter; otherwise the network's.
            return .failure(running ? .disconnected : .notRunning)
        case .unexpected(let line):
            return .failure(.server(code: "bad-reply", message: line))
        case .state(let state):
            return .failure(.server(code: "bad-reply", message: "STATE \(state.revision) \(state.route)"))
        case .listing(let lines):
            return .failure(.server(code: "bad-reply", message: lines.joined(separator: " | ")))
        case .pong(let text):
            return .failure(.server(code: "bad-reply", message: "PONG \(text)"))
        case .identity(let id, let name, let role, let rooms):
            return .failure(.server(code: "bad-reply", message: "YOU \(id) \(name) \(role.rawValue) \(rooms)"))
        }
    }
}
