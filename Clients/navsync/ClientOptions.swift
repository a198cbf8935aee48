import GNUFlags
import NavSyncClient
import NavSyncCore

/// What `navsync` was asked to do, read from its arguments and environment.
/// Anything wrong here is a usage error: exit status 64 and a one-line hint.
struct ClientOptions {
    enum Mode: Equatable {
        /// The full-screen client; `explicit` when `ui` was typed rather than implied.
        case ui(explicit: Bool)
        /// One request, one reply, printed.
        case oneShot(ClientRequest)
        case watch
    }

    /// Tried in turn (several daemons sharing a backplane).
    var endpoints = [Endpoint.defaultAddress]
    var room: String?
    var tokenPath: String?
    var mode: Mode = .ui(explicit: false)
    var wantsHelp = false
    var wantsVersion = false

    static let spec = CommandLineSpec(
        valued: ["connect", "unix", "room", "token-file"],
        switches: ["help", "version"],
        shortAliases: ["h": "help"])

    static let usage = """
        usage: navsync [--connect HOST:PORT[,HOST:PORT...] | --unix PATH] [--room ROOM] [--token-file FILE] [COMMAND]

        commands:
          (none), ui            full-screen client (needs a terminal)
          get                   print the route, e.g. /green/blue
          select NAME [DATA]    the stack becomes just this screen; prints the new revision
          push NAME [DATA]      present NAME on top; prints the new revision
          pop                   dismiss the top screen
          root                  back to the bottom screen
          next [DATA]           replace the top screen by its next one
          open ROUTE            deep link, e.g. /red/blue:hello%20there
          watch                 print REV state ROUTE, then REV OP ROUTE per change; reconnects
          screens               list the catalog: name color next data title

        options:
          --connect HOST:PORT   daemon address (default $NAVSYNC_ADDR, else 127.0.0.1:7878;
                                $NAVSYNC_ADDR may also be unix:PATH); a comma-separated
                                list (daemons sharing a backplane) is tried in turn
          --unix PATH           connect to a Unix domain socket instead
          --room ROOM           work in this room (default main)
          --token-file FILE     authenticate with the first line of FILE
          -h, --help            this text
          --version             print the version

        exit status: 0 done, 1 refused by the daemon (its ERR line on stderr) or
        daemon unreachable, 64 usage error
        """

    static func parse(_ arguments: [String], environment: [String: String]) throws(CommandLineSpec.UsageError) -> ClientOptions {
        let parsed = try spec.parse(arguments)
        var options = ClientOptions()
        options.wantsHelp = parsed.has("help")
        options.wantsVersion = parsed.has("version")

        let connect = parsed.last("connect")
        let unix = parsed.last("unix")
        switch (connect, unix) {
        case (_?, _?):
            throw CommandLineSpec.UsageError("--connect and --unix cannot be used together")
        case (let address?, nil):
            options.endpoints = try Endpoint.parseList(address, source: "--connect")
            if options.endpoints.contains(where: { if case .unix = $0 { true } else { false } }) {
                throw CommandLineSpec.UsageError("--connect wants HOST:PORT; use --unix for a socket path")
            }
        case (nil, let path?):
            guard !path.isEmpty else { throw CommandLineSpec.UsageError("--unix needs a path") }
            options.endpoints = [.unix(path: path)]
        case (nil, nil):
            if let address = environment["NAVSYNC_ADDR"], !address.isEmpty {
                options.endpoints = try Endpoint.parseList(address, source: "$NAVSYNC_ADDR")
            }
        }

        if let room = parsed.last("room") {
            guard Names.isValid(room) else {
                throw CommandLineSpec.UsageError("--room wants 1-64 characters of A-Z a-z 0-9 _ . -, not '\(room)'")
            }
            options.room = room
        }
        if let path = parsed.last("token-file") {
            guard !path.isEmpty else { throw CommandLineSpec.UsageError("--token-file needs a path") }
            options.tokenPath = path
        }
        options.mode = try mode(parsed.positionals)
        return options
    }

    private static func mode(_ words: [String]) throws(CommandLineSpec.UsageError) -> Mode {
        guard let command = words.first else { return .ui(explicit: false) }
        let args = Array(words.dropFirst())
        /// Everything after the screen name is the data, as on the wire.
        func data(_ rest: ArraySlice<String>) -> String? {
            rest.isEmpty ? nil : rest.joined(separator: " ")
        }
        func none() throws(CommandLineSpec.UsageError) {
            guard args.isEmpty else { throw CommandLineSpec.UsageError("\(command) takes no arguments") }
        }
        let request: ClientRequest
        switch command {
        case "ui": try none(); return .ui(explicit: true)
        case "watch": try none(); return .watch
        case "get": try none(); request = .get
        case "screens": try none(); request = .screens
        case "pop": try none(); request = .pop
        case "root": try none(); request = .root
        case "select", "push":
            guard let name = args.first else { throw CommandLineSpec.UsageError("\(command) needs a screen name") }
            request = command == "select" ? .select(screen: name, data: data(args.dropFirst()))
                                          : .push(screen: name, data: data(args.dropFirst()))
        case "next":
            request = .next(data: data(args[...]))
        case "open":
            guard args.count == 1 else { throw CommandLineSpec.UsageError("open needs exactly one route, such as /red/blue") }
            request = .open(route: args[0])
        default:
            throw CommandLineSpec.UsageError("unknown command '\(command)'")
        }
        if let problem = request.problem { throw CommandLineSpec.UsageError("\(command): \(problem)") }
        return .oneShot(request)
    }
}
