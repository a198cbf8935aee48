import NavSyncTLS

/// Whom a client's `tls://` connections trust: the system's roots plus, when
/// given, the PEM file of `--tls-ca` / `$NAVSYNC_TLS_CA` / `tlsCA`. Built on
/// the first TLS connection (a client with no `tls://` address never reads
/// the file) and kept, so reconnects do not reread the roots. The
/// certificate is always checked against the name connected to; nothing
/// here can turn that off.
///
/// Must be used on the loop thread only.
public final class TLSTrust {
    public let extraRootsFile: String?
    private var built: Result<TLSClientContext, TLSError>?

    public init(extraRootsFile: String? = nil) {
        self.extraRootsFile = extraRootsFile
    }

    /// The context, or why it could not be made (a CA file that cannot be read).
    func context() -> Result<TLSClientContext, TLSError> {
        if let built { return built }
        let result: Result<TLSClientContext, TLSError>
        do {
            result = .success(try TLSClientContext(extraRootsFile: extraRootsFile))
        } catch {
            result = .failure(error)
        }
        built = result
        return result
    }
}
