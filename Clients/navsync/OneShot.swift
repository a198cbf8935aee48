import NavSyncClient
import NavSyncCore
import UVLoop

/// `navsync get|state|select|push|pop|root|next|open|if|screens|stats|ping`:
/// connect, send one command, print its answer, exit. A daemon that cannot be
/// reached is reported after one bounded attempt, unless `--retry`.
enum OneShot {
    /// How the answer is printed on stdout.
    enum Format: Equatable {
        /// `STATE 4 /green` as `/green`.
        case route
        /// `STATE 4 /green` as `4 /green`.
        case revisionAndRoute
        /// `OK 4` as `4`.
        case revision
        /// Item lines without their first word (`SCREEN`, `STAT`), then nothing for `END`.
        case listing
        /// `PONG hi` as it is.
        case pong
        /// `MEMBER 4 ada control -` as `ada control following`, and
        /// `MEMBER 5 bo view /red/blue` as `bo view at /red/blue`.
        case members
    }

    static func run(_ request: ClientRequest, format: Format, endpoints: [Endpoint], room: String?, token: String?,
                    retry: Bool, tlsCA: String?) -> Int32 {
        guard let loop = ClientLoop.start() else { return 1 }
        var options = SyncClientOptions.oneShot(room: room, token: token, retry: retry)
        // With a token, ask WHOAMI first: a room outside the grant is then
        // explained with the rooms the grant allows (COMMANDS.md).
        options.askIdentity = token != nil
        let driver = ClientDriver(loop: loop, endpoints: endpoints, options: options, tlsCA: tlsCA)
        let roomName = room ?? Names.defaultRoom
        var status: Int32 = 1
        var finished = false

        driver.onNote = { note in
            guard !finished else { return }
            switch note {
            case .link(.waiting(let retryAt, _, let reason)) where !driver.client.hasConnected:
                Output.complain("cannot connect to \(endpoints.map(\.description).joined(separator: ",")) (\(reason)); retrying in \(Output.seconds(retryAt &- driver.now))")
            case .serverError(let error) where error.throttledRetrySeconds != nil:
                // Transient: the client waits as long as the daemon said, then asks again.
                Output.err(TerminalSafeText.escaped(error.line))
                if let hint = hint(for: error) { Output.complain(hint) }
            case .reply(_, let reply):
                finished = true
                status = report(reply, format: format, request: request, endpoint: driver.endpoint,
                                reachedDaemon: driver.client.hasConnected, room: roomName,
                                identity: driver.client.identity)
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
    private static func report(_ reply: Reply, format: Format, request: ClientRequest, endpoint: Endpoint,
                               reachedDaemon: Bool, room: String, identity: Identity?) -> Int32 {
        switch reply {
        case .state(let state):
            Output.outFromNetwork(format == .revisionAndRoute ? "\(state.revision) \(state.route)\n" : state.route + "\n")
            return 0
        case .ok(let revision):
            Output.out("\(revision)\n")
            return 0
        case .listing(let lines) where format == .members:
            Output.outFromNetwork(lines.compactMap(memberLine).joined())
            return 0
        case .listing(let lines):
            // `SCREEN red red green none Red` is listed as `red red green none Red`.
            Output.outFromNetwork(lines.map { String(ServerLine.split(Substring($0)).1) + "\n" }.joined())
            return 0
        case .pong(let text):
            Output.outFromNetwork(text.isEmpty ? "PONG\n" : "PONG \(text)\n")
            return 0
        case .identity(let identity):
            Output.outFromNetwork("\(identity.id) \(identity.name) \(identity.role) \(identity.rooms)\n")
            return 0
        case .error(let error):
            Output.err(TerminalSafeText.escaped(error.line))
            if let hint = hint(for: error, room: room, identity: identity) { Output.complain(hint) }
            return 1
        case .unexpected(let line):
            Output.complain("unexpected answer from \(endpoint) to \(request.verb.rawValue): \(line)")
            return 1
        case .invalid(let problem):
            Output.complain(problem)
            return 64
        case .lost(let reason):
            Output.complain(reachedDaemon ? "lost the connection to \(endpoint): \(reason)"
                                          : "cannot connect to \(endpoint): \(reason)")
            return 1
        }
    }

    /// One member as `navsync who` prints it, with its newline.
    private static func memberLine(_ line: String) -> String? {
        guard case .member(let member) = ServerLine.parse(line) else { return nil }
        let where_ = member.at.map { "at \($0)" } ?? "following"
        return "\(member.name) \(member.role.rawValue) \(where_)\n"
    }

    /// What to do about a refusal that a flag can fix, in one line.
    /// `room` and `identity` (the connection's `WHOAMI`, when asked) let a
    /// room outside the grant be named with the rooms the grant allows.
    static func hint(for error: ServerError, room: String? = nil, identity: Identity? = nil) -> String? {
        switch error.code {
        case ErrorCode.authRequired.rawValue:
            return "this daemon needs a token: --token-file FILE (FILE's first line is the token)"
        case ErrorCode.authFailed.rawValue where error.throttledRetrySeconds != nil:
            return "this address sent too many wrong tokens; trying again in \(error.throttledRetrySeconds ?? 1) s"
        case ErrorCode.authFailed.rawValue:
            return "the daemon refused the token; check the --token-file"
        case ErrorCode.forbidden.rawValue:
            guard let room else { return "this token's grant does not allow that (a view grant, or a room outside its rooms)" }
            return GrantAdvice.forbidden(error, room: room, identity: identity)
        default:
            return nil
        }
    }
}
