import Glibc
import NavSyncClient
import NavSyncCore
import UVLoop

/// `navsync watch`: one line per change, flushed as it comes, until SIGINT or
/// SIGTERM. Lost connections are retried; after each (re)connect and each
/// resync the whole state is printed again as `REV state ROUTE`.
enum Watch {
    static func run(endpoints: [Endpoint], room: String?, token: String?) -> Int32 {
        guard let loop = ClientLoop.start() else { return 1 }
        let driver = ClientDriver(loop: loop, endpoints: endpoints, options: .stream(room: room, token: token))
        let roomName = room ?? "main"
        var status: Int32 = 0
        var signals: [SignalWatcher] = []

        func finish(_ code: Int32) {
            status = code
            for watcher in signals { watcher.close() }
            signals.removeAll()
            driver.stop()
            loop.stop()
        }

        driver.onNote = { note in
            switch note {
            case .snapshot(let state, _):
                if !Output.out("\(state.revision) state \(state.route)\n") { finish(0) }
            case .event(let state, let op):
                if !Output.out("\(state.revision) \(op) \(state.route)\n") { finish(0) }
            case .gap(let expected, let received):
                Output.log("warn", "revision \(received) arrived where \(expected) was due; resynchronising")
            case .link(.live):
                Output.log("info", "watching room \(roomName) on \(driver.endpoint)")
            case .link(.waiting(let retryAt, let failures, let reason)):
                let what = failures > 1 ? "still no connection" : "connection lost"
                Output.log("warn", "\(what) (\(reason)); retrying in \(Output.seconds(retryAt &- driver.now))")
            case .link(.stopped(let reason)):
                if signals.isEmpty { return }  // we are the ones stopping
                // A refused greeting has already been printed as the daemon's ERR line.
                if !reason.hasPrefix("ERR ") { Output.complain("watch stopped: \(reason)") }
                finish(1)
            case .serverError(let error):
                Output.err(error.line)
            default:
                break
            }
        }
        do {
            for number in [SIGINT, SIGTERM] {
                signals.append(try SignalWatcher(loop: loop, signal: number) { finish(0) })
            }
        } catch {
            Output.complain("cannot watch signals: \(error)")
            return 1
        }
        driver.start()
        loop.run()
        loop.shutdown()
        return status
    }
}
