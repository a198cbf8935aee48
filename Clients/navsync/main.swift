import Glibc
import NavSyncClient
import NavSyncCore
import UVLoop

// navsync: the terminal client and one-shot command line of navsyncd.
// Exit status: 0 done, 1 refused by the daemon or daemon unreachable, 64 usage.

/// Reads everything, picks the mode and returns the exit status.
func runNavsync(_ arguments: [String], environment: [String: String]) -> Int32 {
    // keygen, token and link mint; they have flags of their own and connect to nothing.
    if let command = arguments.first, Minting.commands.contains(command) {
        return Minting.run(command, Array(arguments.dropFirst()))
    }
    let options: ClientOptions
    do {
        options = try ClientOptions.parse(arguments, environment: environment)
    } catch {
        Output.complain("\(error) (see navsync --help)")
        return 64
    }
    if options.wantsHelp {
        Output.out(ClientOptions.usage + "\n")
        return 0
    }
    if options.wantsVersion {
        Output.out("navsync \(NavSyncVersion.current) (protocol \(NavSyncVersion.protocolVersion))\n")
        return 0
    }

    var token: String?
    if let path = options.tokenPath {
        switch TokenFile.read(path, using: SyncFile.readAll) {
        case .success(let value): token = value
        case .failure(let problem):
            Output.complain(problem.description)
            return 1
        }
    }

    let naming = PresenceNaming(name: options.name, environment: environment)
    switch options.mode {
    case .oneShot(let request, let format):
        return OneShot.run(request, format: format, endpoints: options.endpoints, room: options.room, token: token,
                           retry: options.retry, tlsCA: options.tlsCA)
    case .watch(let limits):
        return Watch.run(endpoints: options.endpoints, rooms: options.rooms, token: token, limits: limits,
                         retry: options.retry, tlsCA: options.tlsCA, naming: naming)
    case .raw(let lines):
        return RawSession.run(lines: lines, endpoints: options.endpoints, room: options.room, token: token,
                               tlsCA: options.tlsCA)
    case .ui(let explicit):
        guard isatty(0) == 1, isatty(1) == 1 else {
            if explicit {
                Output.complain("ui needs a terminal on stdin and stdout; try 'navsync get' or 'navsync watch'")
            } else {
                Output.err(ClientOptions.usage)
            }
            return 64
        }
        if let problem = TerminalApp.unsuitableTerminal(environment) {
            Output.complain(problem)
            return 64
        }
        return TerminalApp.run(endpoints: options.endpoints, room: options.room, token: token, tlsCA: options.tlsCA,
                               environment: environment, naming: naming)
    }
}

var environment: [String: String] = [:]
var entry = environ
while let pointer = entry.pointee {
    let pair = String(decoding: UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)), as: UTF8.self)
    if let equals = pair.firstIndex(of: "=") {
        environment[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
    }
    entry += 1
}
exit(runNavsync(Array(CommandLine.arguments.dropFirst()), environment: environment))
