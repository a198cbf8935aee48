import Foundation
import NavSyncKit

// navsync-abc: seed 002's A → B → C router over a shared room, written only
// against NavSyncKit's public API. It follows the room and prints one line
// per change; with --drive it also walks the cycle itself.

let usage = """
    usage: navsync-abc [--connect ADDR[,ADDR...]] [--room ROOM] [--token-file FILE]
                       [--drive ROUNDS] [--interval MS] [--data TEXT] [--version]
      follows a room of a daemon started with --screens Clients/netcat/abc-screens.json
      and prints one line per change; --drive walks A → B → C → A ROUNDS times
      (0 = for ever), one step every --interval milliseconds (default 1000)
    """

struct Options {
    var connect = ProcessInfo.processInfo.environment["NAVSYNC_ADDR"] ?? "127.0.0.1:7878"
    var room = "main"
    var token: String?
    var rounds: Int?
    var intervalMilliseconds = 1000
    var data = "some data from A"

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let next = rest.popFirst() else { throw UsageError("\(flag) needs a value") }
            return next
        }
        while let argument = rest.popFirst() {
            let (flag, inline) = argument.split(separator: "=", maxSplits: 1).map(String.init).pair
            func take() throws -> String { try inline ?? value(flag) }
            switch flag {
            case "--connect": connect = try take()
            case "--room": room = try take()
            case "--token-file":
                let path = try take()
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw UsageError("cannot read \(path)")
                }
                token = text.split(separator: "\n").first.map(String.init)
            case "--drive":
                guard let n = Int(try take()), n >= 0 else { throw UsageError("--drive wants a number of rounds") }
                rounds = n
            case "--interval":
                guard let n = Int(try take()), n >= 1 else { throw UsageError("--interval wants milliseconds") }
                intervalMilliseconds = n
            case "--data": data = try take()
            case "-h", "--help":
                print(usage)
                exit(0)
            case "--version":
                print("navsync-abc \(NavSyncRelease.version)")
                exit(0)
            default: throw UsageError("unknown argument \(argument)")
            }
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Array where Element == String {
    var pair: (String, String?) { (self[0], count > 1 ? self[1] : nil) }
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("navsync-abc: \(message)\n".utf8))
    exit(status)
}

@MainActor
func run(_ options: Options) async {
    let navigation = SharedNavigation<ABCScreen>(connect: options.connect, room: options.room, token: options.token)
    let router = ABCRouter(navigation: navigation)
    let view = TerminalView(navigation: navigation)
    do {
        try await navigation.start()
    } catch {
        fail(startAdvice(error, navigation.connection, options), status: 1)
    }
    view.follow()

    // Stop cleanly (QUIT) on Ctrl-C or a kill from make demo.
    let signals = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
        source.setEventHandler {
            Task { @MainActor in
                await navigation.stop()
                exit(0)
            }
        }
        source.resume()
        return source
    }
    defer { signals.forEach { $0.cancel() } }

    var steps = 0
    let stepLimit = options.rounds.map { $0 * 3 }
    while true {
        try? await Task.sleep(for: .milliseconds(options.intervalMilliseconds))
        if case .failed = navigation.connection { break }
        guard let stepLimit else { continue }  // following only
        if stepLimit > 0, steps >= stepLimit { break }
        do {
            try await router.advance(dataFromA: options.data)
            steps += 1
        } catch NavSyncError.disconnected {
            continue  // the view says "reconnecting"; try again on the next tick
        } catch NavSyncError.server(let code, _) where code == "conflict" {
            continue  // another client moved the room first: the next step starts from where it is now
        } catch {
            // The daemon will refuse the same step again (a catalog without
            // these screens, a viewer's grant): retrying for ever helps nobody.
            await navigation.stop()
            fail("step refused, stopping: \(error)", status: 1)
        }
    }
    var failed = false
    if case .failed = navigation.connection { failed = true }
    await navigation.stop()
    if failed { exit(1) }
}

/// Why `start()` failed, in terms of what to do about it.
@MainActor
func startAdvice(_ error: any Error, _ state: NavConnectionState, _ options: Options) -> String {
    let place = "room \(options.room) at \(options.connect)"
    switch error {
    case NavSyncError.disconnected:
        // The connection state holds the reason: refused, timed out, or closed by the peer.
        if case .failed(let reason) = state { return "cannot follow \(place): \(reason) (is navsyncd running there?)" }
        return "cannot follow \(place): no daemon answered (is navsyncd running there?)"
    case NavSyncError.unknownScreen(let screen):
        return "cannot follow \(place): it shows \(screen), not one of viewA, viewB, viewC; "
            + "start the daemon with --screens Clients/netcat/abc-screens.json"
    default:
        return "cannot follow \(place): \(error)"
    }
}

let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error)\n\(usage)", status: 64)
}
// The main actor must keep running on Linux: an async top level serves it.
await run(options)
