/// A reason the daemon cannot start, already phrased for the operator:
/// it names the file or address and what is wrong (exit status 1).
struct DaemonStartError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
