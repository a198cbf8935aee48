/// The release every binary reports with `--version`, `HELLO`, `STATS` and
/// `/metrics`. This line is the one place the number is written: the Makefile
/// reads it from here for the Debian package and the man pages, and
/// Tests/packaging/run.sh checks that the binaries, `HELLO`, `/metrics`,
/// the man pages, CHANGELOG.md's newest heading, README.md and
/// docs/LIBRARY.md agree (Tests/docs/run.sh checks the text alone).
public enum NavSyncVersion {
    public static let current = "1.3.0"
    /// The line protocol this code speaks.
    public static let protocolVersion = 1
}
