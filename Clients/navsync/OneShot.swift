import NavSyncClient
import NavSyncCore
import UVLoop

/// `navsync get|select|push|pop|root|next|open|screens`: connect, send one
/// command, print its answer, exit. No retry: a daemon that cannot be reached
/// is reported at once.
enum OneShot {
    static func run(_ request: ClientRequest, endpoints: [Endpoint], room: String?, token: String?) -> Int32 {
        guard let loop = ClientLoop.start() else { return 1 }
        let driver = ClientDriver(loop: loop, endpoints: endpoints, options: .oneShot(room: room, token: token))
        var status: Int32 = 1
        var reachedDaemon = false
        var finished = false

        driver.onNote = { note in
            guard !finished else { return }
            switch note {
            case .link(.handshaking), .link(.live):
                reachedDaemon = true
            case .reply(_, let reply):
                finished = true
                status = report(reply, for: request, endpoint: driver.endpoint, reachedDaemon: reachedDaemon)
                driver.stop()
                loop.stop()
            default:
                break
            }
        }
        driver.submit(request)
        driver.start()
        loop.run()
        loop.shutdown()
        return status
    }

    /// Prints the answer the way COMMANDS.md lists it and returns the exit status.
    private static func report(_ reply: Reply, for request: ClientRequest, endpoint: Endpoint,
                               reachedDaemon: Bool) -> Int32 {
        switch reply {
        case .state(let state):
            Output.out(state.route + "\n")
            return 0
        case .ok(let revision):
            Output.out("\(revision)\n")
            return 0
        case .listing(let lines):
            // `SCREEN red red green none Red` is listed as `red red green none Red`.
            let prefix = "SCREEN "
            Output.out(lines.map { ($0.hasPrefix(prefix) ? String($0.dropFirst(prefix.count)) : $0) + "\n" }.joined())
            return 0
        case .pong(let text):
            Output.out(text + "\n")
            return 0
        case .error(let error):
            Output.err(error.line)
            return 1
        case .unexpected(let line):
            Output.complain("unexpected answer from \(endpoint) to \(request.line.split(separator: " ")[0]): \(line)")
            return 1
        case .invalid(let problem):
            Output.complain(problem)
            return 64
        case .lost(let reason):
            Output.complain(reachedDaemon ? "lost the connection to \(endpoint): \(reason)"
                                          : "cannot reach \(endpoint): \(reason)")
            return 1
        }
    }
}
