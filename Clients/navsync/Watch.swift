import Glibc
import NavSyncClient
import NavSyncCore
import UVLoop

/// `navsync watch`: one line per change, flushed as it comes, until SIGINT or
/// SIGTERM, `--count` changes or `--timeout`. The first line is the whole
/// state, `REV state ROUTE`. Lost connections are retried and resume with
/// `WATCH <rev>`: when the daemon continues, the changes missed meanwhile are
/// printed as ordinary lines, so a script's log has no hole; only a real
/// resync prints a `REV state ROUTE` line again. A daemon that was never
/// reached ends the watch with status 1 after one attempt, unless `--retry`.
///
/// Several rooms (`--room a --room b`) get one connection each, on the same
/// loop, and every line starts with its room's name.
enum Watch {
    static func run(endpoints: [Endpoint], rooms: [String], token: String?, limits: ClientOptions.WatchLimits,
                    retry: Bool, tlsCA: String?, naming: PresenceNaming = PresenceNaming()) -> Int32 {
        guard let loop = ClientLoop.start() else { return 1 }
        let names = rooms.isEmpty ? [Names.defaultRoom] : rooms
        let prefixed = names.count > 1
        var status: Int32 = 0
        var stopping = false
        var changes = 0
        var drivers: [ClientDriver] = []
        var signals: [SignalWatcher] = []
        let deadline = LoopTimer(loop: loop)

        func finish(_ code: Int32) {
            guard !stopping else { return }
            stopping = true
            status = code
            for watcher in signals { watcher.close() }
            signals.removeAll()
            deadline.close()
            for driver in drivers { driver.stop() }
            loop.stop()
        }

        func print(_ room: String, _ line: String) {
            if !Output.outFromNetwork((prefixed ? room + " " : "") + line + "\n") { finish(0) }
        }

        for name in names {
            var options = naming.applied(to: .stream(room: name == Names.defaultRoom ? nil : name, token: token, retry: retry))
            // With a token, WHOAMI names the grant's rooms when this one is outside it.
            options.askIdentity = options.askIdentity || token != nil
            let driver = ClientDriver(loop: loop, endpoints: endpoints, options: options, tlsCA: tlsCA)
            let label = prefixed ? "room \(name): " : ""
            driver.onNote = { note in
                guard !stopping else { return }
                switch note {
                case .snapshot(let state, _):
                    print(name, "\(state.revision) state \(state.route)")
                case .event(let state, let op):
                    print(name, "\(state.revision) \(op) \(state.route)")
                    changes += 1
                    if let count = limits.count, changes >= count { finish(0) }
                case .continued(let revision):
                    Output.log("info", "\(label)continued after revision \(revision)")
                case .gap(let expected, let received):
                    Output.log("warn", "\(label)revision \(received) arrived where \(expected) was due; resynchronising")
                case .link(.live):
                    Output.log("info", "watching room \(name) on \(driver.endpoint)")
                case .link(.waiting(let retryAt, let failures, let reason)):
                    let what = !driver.client.hasConnected ? "cannot connect to \(driver.endpoint)"
                        : failures > 1 ? "still no connection" : "connection lost"
                    Output.log("warn", "\(label)\(what) (\(reason)); retrying in \(Output.seconds(retryAt &- driver.now))")
                case .link(.stopped(let reason)):
                    // A refused greeting has already been printed as the daemon's ERR line.
                    if !reason.hasPrefix("ERR ") {
                        Output.complain(driver.client.hasConnected ? "\(label)watch stopped: \(reason)"
                                                                   : "cannot connect to \(driver.endpoint): \(reason)")
                    }
                    finish(1)
                case .serverError(let error):
                    Output.err(error.line)
                    if let hint = OneShot.hint(for: error, room: name, identity: driver.client.identity) {
                        Output.complain(hint)
                    }
                default:
                    break
                }
            }
            drivers.append(driver)
        }
        do {
            for number in [SIGINT, SIGTERM] {
                signals.append(try SignalWatcher(loop: loop, signal: number) { finish(0) })
            }
        } catch {
            Output.complain("cannot watch signals: \(error)")
            return 1
        }
        if let milliseconds = limits.timeoutMilliseconds {
            deadline.start(afterMilliseconds: milliseconds) {
                if let count = limits.count {
                    Output.complain("watch: \(changes) of \(count) changes before the timeout")
                    finish(1)
                } else {
                    finish(0)
                }
            }
        }
        for driver in drivers where !stopping { driver.start() }
        loop.run()
        loop.shutdown()
        return status
    }
}
