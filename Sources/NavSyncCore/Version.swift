/// The release both binaries report with `--version`, `HELLO` and `STATS`.
public enum NavSyncVersion {
    public static let current = "0.1.0"
    /// The line protocol this code speaks.
    public static let protocolVersion = 1
}
