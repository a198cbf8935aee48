/// Why a connection's input ended, reported through `StreamConnection.onEnd`; an `.eof` may be
/// followed by one `.error` if a later write fails.
public enum StreamEnd: Equatable {
    /// The peer finished sending (it closed or half-closed its side). Writing may still work.
    case eof
    /// A read, write or shutdown failed, for example ECONNRESET or EPIPE. The connection is unusable.
    case error(UVError)
}
