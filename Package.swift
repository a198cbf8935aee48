// swift-tools-version:6.2
import PackageDescription

// The loop is single-threaded; a libuv callback that touches actor-isolated
// state would be a data race, so that warning is promoted to an error.
let strict: [SwiftSetting] = [.treatWarning("ActorIsolatedCall", as: .error)]

let package = Package(
    name: "navsync",
    products: [
        .executable(name: "navsyncd", targets: ["navsyncd"]),
        .executable(name: "navsync", targets: ["navsync"]),
        .executable(name: "navsync-bench", targets: ["navsync-bench"]),
        .executable(name: "navsync-abc", targets: ["navsync-abc"]),
        .library(name: "NavSyncKit", targets: ["NavSyncKit"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"])]
        ),
        // No pkgConfig on purpose: SwiftPM would strip the _XOPEN_SOURCE flag
        // and the wide-character API would disappear (see docs/DEVELOPING.md).
        .systemLibrary(name: "CNCurses", providers: [.apt(["libncurses-dev"])]),
        // WebSocket framing; Debian ships no .pc file for it.
        .systemLibrary(name: "CWslay", providers: [.apt(["libwslay-dev"])]),
        // SHA-1 and base64 for the WebSocket handshake.
        .systemLibrary(name: "CNettle", pkgConfig: "nettle", providers: [.apt(["nettle-dev"])]),
        // OpenSSL 3 (libssl-dev) for TLS; only NavSyncTLS imports it.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // libqrencode (libqrencode-dev) for the QR code `navsync link` draws on a terminal.
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // glibc's malloc.h (malloc_trim), which Swift's Glibc module does not bring in; no library to link.
        .systemLibrary(name: "CGlibcMalloc"),
        // hiredis (libhiredis-dev) and the one wrapper its static libuv adapter needs.
        .target(
            name: "CHiredis",
            linkerSettings: [.linkedLibrary("hiredis"), .linkedLibrary("uv")]
        ),

        .target(name: "NavSyncCore", swiftSettings: strict),
        // GNU-style flag reading for the three binaries; no protocol, no IO.
        .target(name: "GNUFlags", swiftSettings: strict),
        .target(name: "UVLoop", dependencies: ["CLibUV", "NavSyncCore"], swiftSettings: strict),
        // TLS below the front door and under the clients: OpenSSL driven through memory BIOs, the
        // one place besides UVLoop that holds C pointers.
        .target(name: "NavSyncTLS", dependencies: ["COpenSSL", "UVLoop", "NavSyncCore"], swiftSettings: strict),
        .target(name: "NavSyncServer", dependencies: ["NavSyncCore"], swiftSettings: strict),
        // The web front door, whole: the sniff, HTTP heads, routing and access, the exchange, WebSocket
        // framing (wslay) and its lines; a layer of the byte stream (lines up, frames down) that asks
        // the hub for what HTTP needs through a port of its own (WebHubPort), so it needs no hub types.
        .target(name: "NavSyncWeb", dependencies: ["NavSyncCore", "UVLoop", "CWslay", "CNettle"],
                swiftSettings: strict),
        .target(name: "RedisClient", dependencies: ["CHiredis", "UVLoop", "NavSyncCore"], swiftSettings: strict),
        .target(name: "NavSyncBackplane", dependencies: ["NavSyncCore", "NavSyncServer", "RedisClient", "UVLoop"],
                swiftSettings: strict),
        .target(name: "NavSyncClient", dependencies: ["NavSyncCore", "UVLoop", "NavSyncTLS"], swiftSettings: strict),
        // The public Swift library: SharedNavigation over NavSyncClient, its loop on a thread of its own.
        .target(name: "NavSyncKit", dependencies: ["NavSyncClient", "NavSyncCore", "UVLoop"], swiftSettings: strict),

        .executableTarget(
            name: "navsyncd",
            dependencies: ["NavSyncCore", "NavSyncServer", "NavSyncBackplane", "RedisClient", "UVLoop", "GNUFlags", "NavSyncWeb", "NavSyncTLS",
                           "CGlibcMalloc"],
            swiftSettings: strict,
            plugins: ["EmbedWebPage"]
        ),
        // Web/index.html becomes a source file of navsyncd at build time.
        .executableTarget(name: "embed-page"),
        .plugin(name: "EmbedWebPage", capability: .buildTool(), dependencies: ["embed-page"]),
        .executableTarget(
            name: "navsync",
            dependencies: ["NavSyncCore", "NavSyncClient", "UVLoop", "CNCurses", "GNUFlags", "NavSyncTLS", "CQREncode"],
            path: "Clients/navsync",
            exclude: [],
            swiftSettings: strict
        ),

        // Seed 002's A → B → C router over a shared room: the library's example, public API only.
        .executableTarget(
            name: "navsync-abc",
            dependencies: ["NavSyncKit"],
            path: "Clients/abc-router",
            swiftSettings: strict
        ),

        // What NavSyncKit costs: SELECT → observable latency, memory and threads per object (bench/kit.sh).
        .executableTarget(name: "navsync-kit-bench", dependencies: ["NavSyncKit"], swiftSettings: strict),

        // Fan-out benchmark against navsyncd and peers (Redis, NATS), on the same loop.
        .executableTarget(name: "navsync-bench", dependencies: ["UVLoop", "GNUFlags", "NavSyncTLS", "NavSyncCore"], swiftSettings: strict),

        .testTarget(name: "NavSyncCoreTests", dependencies: ["NavSyncCore"]),
        .testTarget(name: "GNUFlagsTests", dependencies: ["GNUFlags"]),
        .testTarget(name: "NavSyncServerTests", dependencies: ["NavSyncServer", "NavSyncCore"]),
        .testTarget(name: "NavSyncWebTests", dependencies: ["NavSyncWeb", "NavSyncCore", "UVLoop"]),
        .testTarget(name: "UVLoopTests", dependencies: ["UVLoop", "NavSyncCore"]),
        .testTarget(name: "NavSyncTLSTests", dependencies: ["NavSyncTLS", "UVLoop", "TLSCertificateHarness"]),
        // Certificates made per run with the openssl command (used by the tests only).
        .target(name: "TLSCertificateHarness", dependencies: ["ChildProcessHarness"], path: "Tests/TLSCertificateHarness"),
        .testTarget(name: "EndToEndTests",
                    dependencies: ["NavSyncCore", "ChildProcessHarness", "RedisServerHarness", "NavSyncKit", "navsync-abc",
                                   "TLSCertificateHarness", "NavSyncTLS"]),
        // Bounded waits for the tests' child processes, shared by every harness that starts one.
        .target(name: "ChildProcessHarness", path: "Tests/ChildProcessHarness"),
        // Starts a redis-server of the tests' own (used by the tests only).
        .target(name: "RedisServerHarness", dependencies: ["ChildProcessHarness", "UVLoop"], path: "Tests/RedisServerHarness"),
        .testTarget(name: "RedisClientTests", dependencies: ["RedisClient", "UVLoop", "RedisServerHarness"]),
        .testTarget(name: "NavSyncBackplaneTests",
                    dependencies: ["NavSyncBackplane", "RedisClient", "UVLoop", "RedisServerHarness"]),
        .testTarget(name: "NavSyncClientTests", dependencies: ["NavSyncClient", "NavSyncCore"]),
        // The example's own screen enum is the unit tests' typed screen.
        .testTarget(name: "NavSyncKitTests", dependencies: ["NavSyncKit", "NavSyncClient", "NavSyncCore", "navsync-abc"]),
        // The bench's own parsers (what it counts must be whole answers).
        .testTarget(name: "NavSyncBenchTests", dependencies: ["navsync-bench"]),
    ]
)
