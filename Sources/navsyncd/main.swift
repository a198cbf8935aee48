import Foundation
import Glibc
import NavSyncBackplane
import NavSyncCore
import NavSyncServer
import NavSyncTLS
import NavSyncWeb
import UVLoop

// navsyncd: flags → configuration → the server wired to a libuv loop.
// Exit status: 0 after a clean stop, 1 when it cannot start, 64 on bad usage.

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("navsyncd: \(message)\n".utf8))
    exit(status)
}

let options: DaemonOptions
do {
    options = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()),
                                      environment: ProcessInfo.processInfo.environment)
} catch {
    fail("\(error) (see navsyncd --help)", status: 64)
}
if options.wantsHelp {
    print(DaemonOptions.usage)
    exit(0)
}
if options.wantsVersion {
    print("navsyncd \(NavSyncVersion.current) (protocol \(NavSyncVersion.protocolVersion))")
    exit(0)
}

// A client that vanishes must surface as a write error, not kill the daemon.
signal(SIGPIPE, SIG_IGN)
// Past a file-size limit (ulimit -f) a write must fail with EFBIG, so the
// change is refused with ERR internal; the default action kills the daemon.
signal(SIGXFSZ, SIG_IGN)
let log = StderrLog.logger(level: options.logLevel)

let catalog: Catalog
let grants: [GrantsFile.Entry]
do {
    catalog = try options.screensPath.map(loadCatalog) ?? Catalog.builtIn
    grants = try options.grants?.load() ?? []
} catch {
    fail(error.description, status: 1)
}

// The certificate and key are checked before anything listens: a daemon
// that could not serve TLS must not half-start.
var tlsContext: TLSServerContext?
if !options.tlsListen.isEmpty, let certificate = options.tlsCertificate, let key = options.tlsKey {
    do {
        tlsContext = try TLSServerContext(certificateFile: certificate, keyFile: key)
    } catch {
        fail("TLS: \(error)", status: 1)
    }
}

let loop: EventLoop
do {
    loop = try EventLoop()
} catch {
    fail("cannot start the event loop: \(error)", status: 1)
}

// What loading the state has to say waits until the listeners are up, so a
// daemon that cannot start prints its one-line reason and nothing else.
let startupNotes = HeldLog(level: options.logLevel)
var journal: Journal?
var rooms: [String: RoomState] = [:]
var recentChanges: [String: [JournalFile.RecentChange]] = [:]
if let endpoint = options.backplane {
    startupNotes.logger.info("rooms kept in redis at \(endpoint) under the prefix \(options.backplanePrefix)")
} else if let path = options.statePath {
    do {
        let loaded: JournalFile.Loaded
        (journal, loaded) = try StateFile.open(path: path, createMissingDirectory: options.stateDirectoryMayBeCreated,
                                              policy: options.syncPolicy, log: startupNotes.logger)
        rooms = loaded.rooms
        recentChanges = loaded.recent
    } catch {
        fail(error.description, status: 1)
    }
} else {
    startupNotes.logger.info("state kept in memory only (--state none)")
}

// Every file that holds a secret, once at start.
if let warning = options.grants?.exposureWarning { startupNotes.logger.warn(warning) }
if let key = options.tlsKey, !options.tlsListen.isEmpty,
   let warning = SecretFile.exposureWarning(key, holding: "TLS key") { startupNotes.logger.warn(warning) }
if let path = options.backplaneAuthPath,
   let warning = SecretFile.exposureWarning(path, holding: "backplane auth file") { startupNotes.logger.warn(warning) }
if let path = options.tokenKeysPath,
   let warning = SecretFile.exposureWarning(path, holding: "token keys file") { startupNotes.logger.warn(warning) }
let config = ServerConfig(version: NavSyncVersion.current, limits: options.limits, grants: grants,
                          anonymous: options.anonymous, tokensConfigured: options.tokensConfigured)
let started = loop.nowMilliseconds
var backplane: RedisRoomStore?
let server: Server
if let endpoint = options.backplane {
    let keys = BackplaneKeys(prefix: options.backplanePrefix, database: endpoint.database)
    var settings = RedisRoomStore.Settings(endpoint: endpoint, keys: keys,
                                           historyLength: options.limits.historyCount, replaceCatalog: options.replaceCatalog)
    settings.historyBytes = options.limits.historyBytes
    settings.maxLineBytes = options.limits.maxLineBytes
    settings.maxRemoteMembers = min(options.limits.maxClients, Int.max / 10) * 10
    if let path = options.backplaneAuthPath {
        do {
            settings.credentials = try loadBackplaneCredentials(path)
        } catch {
            fail(error.description, status: 1)
        }
    }
    let store = RedisRoomStore(loop: loop, settings: settings, log: log)
    server = Server(config: config, catalog: catalog, rooms: [:], store: store, log: log,
                    secondsSinceStart: { (loop.nowMilliseconds - started) / 1000 },
                    milliseconds: { loop.nowMilliseconds })
    // Redis must answer, be new enough and agree on the catalog before anyone is let in.
    var startError: RedisRoomStore.StartError?
    store.start { error in
        startError = error
        loop.stop()
    }
    loop.run()
    if let startError { fail("backplane: \(startError)", status: 1) }
    backplane = store
} else {
    server = Server(config: config, catalog: catalog, rooms: rooms, recent: recentChanges, journal: journal, log: log,
                    secondsSinceStart: { (loop.nowMilliseconds - started) / 1000 },
                    milliseconds: { loop.nowMilliseconds })
}
// Signed tokens: the keys before anyone is let in (exit 1 on a bad file).
var signedTokenKeys: SignedTokenKeys?
if let path = options.tokenKeysPath {
    let keys = SignedTokenKeys(path: path, audience: options.tokenAudience, server: server, log: log)
    do {
        try keys.start(loop: loop)
    } catch {
        fail(error.description, status: 1)
    }
    signedTokenKeys = keys
}
let door = WebFrontDoor(access: WebAccess(allowedOrigins: options.allowedOrigins), page: WebPage.bytes,
                        maxLineBytes: options.limits.maxLineBytes)
server.addFigures { door.figures }
let daemon = Daemon(loop: loop, server: server, log: log, screensPath: options.screensPath, door: door,
                    keepaliveSeconds: options.limits.keepaliveSeconds, maxClients: options.limits.maxClients,
                    maxHandshakes: options.maxHandshakes,
                    tlsContext: tlsContext, backplane: backplane)

do {
    try daemon.listen(options.listen, tls: options.tlsListen, unixPath: options.unixPath)
} catch {
    fail(error.description, status: 1)
}
startupNotes.release()
daemon.grantsSource = options.grants
daemon.signedTokenKeys = signedTokenKeys
daemon.installSignalHandlers()
loop.beforeBlocking { daemon.beforeBlocking() }
log.info("navsyncd \(NavSyncVersion.current) ready: \(rooms.count) rooms loaded, catalog of \(catalog.screens.count) screens")
loop.run()
// hiredis closes its own handles; the loop's shutdown only knows ours.
backplane?.close()
loop.shutdown()
log.info("stopped")
exit(0)
