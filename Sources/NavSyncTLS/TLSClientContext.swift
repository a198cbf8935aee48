import COpenSSL

/// What a client's TLS connections share: the trusted roots (the system's,
/// plus an optional PEM file of extra ones, e.g. for a self-signed
/// certificate), TLS 1.2 as the oldest version. Peer verification is always
/// on and there is no way to turn it off: a connection whose certificate
/// does not chain to a trusted root, or does not name the host connected
/// to, fails its handshake.
///
/// Must be used on one thread at a time.
public final class TLSClientContext {
    /// `SSL_CTX *`, owned.
    let pointer: OpaquePointer

    /// `extraRootsFile`: a PEM file of certificates to trust besides the system's.
    public init(extraRootsFile: String? = nil) throws(TLSError) {
        OpenSSLErrors.clear()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw TLSError.fromQueue("cannot create a TLS context")
        }
        pointer = context
        try TLSContextSettings.apply(to: context)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        // The application traffic secrets reach the engine through the key
        // log, for its own record layer after the handshake (TLSEngine).
        SSL_CTX_set_keylog_callback(context, TLSEngine.keyLogCallback)
        // No system store is not an error: the extra roots may be all there is.
        _ = SSL_CTX_set_default_verify_paths(context)
        OpenSSLErrors.clear()
        if let extraRootsFile {
            guard SSL_CTX_load_verify_locations(context, extraRootsFile, nil) == 1 else {
                throw TLSError.fromQueue("cannot load trusted certificates from \(extraRootsFile)")
            }
        }
    }

    deinit { SSL_CTX_free(pointer) }
}
