import NavSyncCore

/// The navsync release this library was built from, so a program using it
/// (navsync-abc, an app's about box) can report the same number the daemon
/// and the terminal client print with `--version`.
public enum NavSyncRelease {
    public static let version = NavSyncVersion.current
}
