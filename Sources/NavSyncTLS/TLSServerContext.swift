import COpenSSL

/// What every TLS connection of a listener shares: the certificate chain and
/// private key, TLS 1.2 as the oldest version, no renegotiation. Loaded
/// whole or not at all, so a reload (SIGHUP) that fails keeps the old one;
/// connections made with an older context keep using it until they close.
///
/// Must be used on one thread at a time (the daemon's loop thread).
public final class TLSServerContext {
    /// `SSL_CTX *`, owned: freed in deinit (OpenSSL counts the connections'
    /// references, so it outlives this object while one still uses it).
    let pointer: OpaquePointer
    public let certificateFile: String
    public let keyFile: String

    /// Loads the PEM certificate chain and private key and checks that they belong together.
    public init(certificateFile: String, keyFile: String) throws(TLSError) {
        OpenSSLErrors.clear()
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw TLSError.fromQueue("cannot create a TLS context")
        }
        self.pointer = context
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        try TLSContextSettings.apply(to: context)
        // No server-side session cache: it would grow with every client.
        _ = navsync_ssl_ctx_session_cache_off(context)
        // No session tickets either: a TLS 1.3 connection's records pass from
        // OpenSSL to the engine's own record layer when the handshake ends
        // (TLSEngine), which needs OpenSSL to have sealed nothing under the
        // application keys by then. Resumption saved little here: the ticket
        // keys are made afresh by every daemon start and every reload.
        _ = SSL_CTX_set_num_tickets(context, 0)
        // The application traffic secrets reach the engine through the key log.
        SSL_CTX_set_keylog_callback(context, TLSEngine.keyLogCallback)
        guard SSL_CTX_use_certificate_chain_file(context, certificateFile) == 1 else {
            throw TLSError.fromQueue("cannot load the certificate \(certificateFile)")
        }
        guard SSL_CTX_use_PrivateKey_file(context, keyFile, SSL_FILETYPE_PEM) == 1 else {
            // OpenSSL compares the pair as it loads the key ("key values mismatch").
            let detail = OpenSSLErrors.drain() ?? "unreadable"
            if detail.contains("mismatch") {
                throw TLSError("the key \(keyFile) does not match the certificate \(certificateFile)")
            }
            throw TLSError("cannot load the private key \(keyFile): \(detail)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw TLSError.fromQueue("the key \(keyFile) does not match the certificate \(certificateFile)")
        }
    }

    deinit { SSL_CTX_free(pointer) }

    /// Sends `count` session tickets after each handshake, as most TLS
    /// servers do (the tests' peer for a client that must pass over them);
    /// only for engines that keep OpenSSL's record layer.
    func issueTickets(_ count: Int) {
        _ = SSL_CTX_set_num_tickets(pointer, count)
    }
}

/// The settings both sides share.
enum TLSContextSettings {
    static func apply(to context: OpaquePointer) throws(TLSError) {
        guard navsync_ssl_ctx_set_min_tls12(context) == 1 else {
            throw TLSError.fromQueue("cannot require TLS 1.2")
        }
        // OpenSSL frees a connection's 16 KiB read and write buffers while it
        // has nothing in them: an idle connection costs a few KiB, not 34.
        _ = navsync_ssl_ctx_set_mode(context, navsync_ssl_ctx_release_buffers_mode())
        _ = navsync_ssl_ctx_set_options(context, navsync_ssl_hardening_options())
    }
}
