import Foundation

/// Where the built binaries are: `$NAVSYNC_BIN_DIR` (set by `make test`),
/// else `.build/release` under the package root.
enum Binaries {
    static var directory: String {
        if let dir = ProcessInfo.processInfo.environment["NAVSYNC_BIN_DIR"], !dir.isEmpty { return dir }
        // Tests/EndToEndTests/Support/Binaries.swift → package root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/release").path
    }

    static var daemon: String { directory + "/navsyncd" }
    static var client: String { directory + "/navsync" }

    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }
}
