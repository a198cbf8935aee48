import COpenSSL
import Glibc

/// One TLS connection's protocol state, with no socket: ciphertext from the
/// peer goes in through `receive`, plaintext comes out of it; plaintext to
/// send goes in through `send`; whatever OpenSSL wants on the wire
/// (handshake messages, records, alerts) waits in `takeOutgoing`. Two memory
/// BIOs stand in for the socket, so no call ever blocks and the caller
/// decides when bytes move — which keeps every socket on the event loop.
///
/// Memory stays bounded by what TLS itself bounds: a record is at most
/// ~16 KiB, OpenSSL holds at most one partial record, and the memory BIOs
/// are replaced by empty ones whenever they are drained and had grown (a
/// drained memory BIO keeps its buffer otherwise), so an idle connection
/// holds neither record buffers (SSL_MODE_RELEASE_BUFFERS) nor BIO buffers.
///
/// Must be used on one thread at a time.
public final class TLSEngine {
    public enum State: Equatable, Sendable {
        case handshaking
        case established
        /// The peer sent its close_notify: no more plaintext will come.
        case peerClosed
        /// The handshake or a record failed; `reason` is one line.
        case failed(String)
    }

    public private(set) var state = State.handshaking
    /// `SSL *`, owned; nil once released.
    private var ssl: OpaquePointer?
    /// Keeps the context alive as long as this connection uses it.
    private let retainedContext: AnyObject
    /// A memory BIO that had grown past this when drained is swapped for a fresh one.
    static let idleBIOCapacity = 4 * 1024
    /// Plaintext read per SSL_read_ex call: one record's worth.
    static let readChunk = 16 * 1024

    /// The server side of a connection accepted on a TLS listener.
    public init(server context: TLSServerContext) throws(TLSError) {
        retainedContext = context
        ssl = try Self.makeSSL(context.pointer)
        SSL_set_accept_state(ssl)
    }

    /// The client side; the peer's certificate must name `serverName` (a DNS
    /// name or an IP literal, without brackets).
    public init(client context: TLSClientContext, serverName: String) throws(TLSError) {
        retainedContext = context
        let ssl = try Self.makeSSL(context.pointer)
        self.ssl = ssl
        let parameters = SSL_get0_param(ssl)
        if Self.isIPLiteral(serverName) {
            guard X509_VERIFY_PARAM_set1_ip_asc(parameters, serverName) == 1 else {
                throw TLSError.fromQueue("cannot check the certificate against \(serverName)")
            }
        } else {
            X509_VERIFY_PARAM_set_hostflags(parameters, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            guard X509_VERIFY_PARAM_set1_host(parameters, serverName, 0) == 1,
                  navsync_ssl_set_sni(ssl, serverName) == 1 else {
                throw TLSError.fromQueue("cannot check the certificate against \(serverName)")
            }
        }
        SSL_set_connect_state(ssl)
        // The client speaks first: its hello is ready to send.
        advanceHandshake()
    }

    deinit { release() }

    private static func makeSSL(_ context: OpaquePointer) throws(TLSError) -> OpaquePointer {
        OpenSSLErrors.clear()
        guard let ssl = SSL_new(context) else { throw TLSError.fromQueue("cannot create a TLS connection") }
        guard let input = navsync_new_memory_bio(), let output = navsync_new_memory_bio() else {
            SSL_free(ssl)
            throw TLSError("cannot create a TLS connection: out of memory")
        }
        SSL_set_bio(ssl, input, output)
        return ssl
    }

    static func isIPLiteral(_ name: String) -> Bool {
        var probe = in6_addr()
        return inet_pton(AF_INET, name, &probe) == 1 || inet_pton(AF_INET6, name, &probe) == 1
    }

    /// Frees OpenSSL's state at once (a closed connection should not wait
    /// for the last reference to go). Afterwards every call does nothing.
    public func release() {
        if let ssl { SSL_free(ssl) }
        ssl = nil
        outputSink = nil
    }

    // MARK: Input

    /// Takes ciphertext from the peer and returns the plaintext it completes
    /// (empty while the handshake runs or a record is partial). Check
    /// `state` afterwards, and send `takeOutgoing()`: the handshake, alerts
    /// and tickets are answers to input.
    public func receive(_ ciphertext: UnsafeRawBufferPointer) -> [UInt8] {
        guard let ssl, !ciphertext.isEmpty else { return [] }
        switch state {
        case .handshaking, .established: break
        case .peerClosed, .failed: return []
        }
        let input = SSL_get_rbio(ssl)
        // A memory BIO takes everything (it grows), so one write suffices.
        _ = BIO_write(input, ciphertext.baseAddress, Int32(ciphertext.count))
        let wasHandshaking = state == .handshaking
        if wasHandshaking { advanceHandshake() }
        var plaintext: [UInt8] = []
        if state == .established { readPlaintext(into: &plaintext) }
        // The handshake's messages grew the input BIO; a watcher that only
        // listens from now on would keep that buffer for good.
        let justEstablished = wasHandshaking && state != .handshaking
        if navsync_bio_pending(input) == 0 { replaceIfGrown(input: true, beyond: justEstablished ? 0 : Self.idleBIOCapacity) }
        return plaintext
    }

    /// The same, from any byte collection (tests, and callers holding arrays).
    public func receive(_ ciphertext: [UInt8]) -> [UInt8] {
        ciphertext.withUnsafeBytes { receive($0) }
    }

    private func advanceHandshake() {
        guard let ssl else { return }
        OpenSSLErrors.clear()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            state = .established
            return
        }
        let error = SSL_get_error(ssl, result)
        if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return }
        state = .failed(failureReason(error))
    }

    private func readPlaintext(into plaintext: inout [UInt8]) {
        guard let ssl else { return }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.readChunk) { scratch in
            while true {
                OpenSSLErrors.clear()
                var count = 0
                if SSL_read_ex(ssl, scratch.baseAddress, scratch.count, &count) == 1 {
                    plaintext.append(contentsOf: scratch[..<count])
                    continue
                }
                let error = SSL_get_error(ssl, 0)
                switch error {
                case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                    return
                case SSL_ERROR_ZERO_RETURN:
                    state = .peerClosed
                    return
                default:
                    state = .failed(failureReason(error))
                    return
                }
            }
        }
    }

    /// One line saying why: the certificate check's own words when it was
    /// the check that failed, else OpenSSL's reason.
    private func failureReason(_ error: Int32) -> String {
        if let ssl {
            let verdict = SSL_get_verify_result(ssl)
            if verdict != X509_V_OK, let text = X509_verify_cert_error_string(verdict) {
                OpenSSLErrors.clear()
                return "certificate verify failed: " + String(cString: text)
            }
        }
        if let reason = OpenSSLErrors.drain() { return reason }
        if error == SSL_ERROR_SYSCALL { return "the connection ended during TLS" }
        return "TLS error \(error)"
    }

    // MARK: Output

    /// Encrypts plaintext for the peer; the records wait in `takeOutgoing`.
    /// Only once `established`; returns false (and sends nothing) otherwise.
    @discardableResult
    public func send(_ plaintext: UnsafeRawBufferPointer) -> Bool {
        guard let ssl, state == .established || state == .peerClosed else { return false }
        guard !plaintext.isEmpty else { return true }
        OpenSSLErrors.clear()
        var written = 0
        // Into a memory BIO a write never waits: it takes everything or fails.
        guard SSL_write_ex(ssl, plaintext.baseAddress, plaintext.count, &written) == 1, written == plaintext.count else {
            state = .failed(failureReason(SSL_get_error(ssl, 0)))
            return false
        }
        return true
    }

    @discardableResult
    public func send(_ plaintext: [UInt8]) -> Bool {
        plaintext.withUnsafeBytes { send($0) }
    }

    /// Says close_notify: the peer learns that nothing more follows.
    public func finish() {
        guard let ssl, state == .established || state == .peerClosed else { return }
        OpenSSLErrors.clear()
        _ = SSL_shutdown(ssl)
        OpenSSLErrors.clear()
    }

    /// From now on every byte OpenSSL wants on the wire goes to `sink` the
    /// moment it is made, from inside the call that made it (`send`,
    /// `receive`, `finish`), in place of waiting in the output memory BIO:
    /// the sink reads a record straight from OpenSSL's buffer (valid only
    /// during the call) and must take all of it. What already waits is
    /// passed first. `takeOutgoing` is empty afterwards.
    public func divertOutput(to sink: @escaping (UnsafeRawBufferPointer) -> Void) {
        guard let ssl else { return }
        let waiting = takeOutgoing()
        if !waiting.isEmpty { waiting.withUnsafeBytes { sink($0) } }
        guard let method = SinkBIO.method, let bio = BIO_new(method) else { return }
        outputSink = sink
        // The BIO is the SSL object's, which is this engine's: it never
        // outlives the engine, so an unretained reference is enough.
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
        BIO_set_init(bio, 1)
        // set0 frees the memory BIO and takes the sink.
        SSL_set0_wbio(ssl, bio)
    }

    /// Where `divertOutput` sends records; nil while they wait in the memory BIO.
    fileprivate var outputSink: ((UnsafeRawBufferPointer) -> Void)?

    /// Bytes OpenSSL wants on the wire.
    public var outgoingCount: Int {
        guard let ssl, outputSink == nil else { return 0 }
        return navsync_bio_pending(SSL_get_wbio(ssl))
    }

    /// Takes every byte waiting to go on the wire (empty when none).
    public func takeOutgoing() -> [UInt8] {
        guard let ssl, outputSink == nil else { return [] }
        let output = SSL_get_wbio(ssl)
        let count = navsync_bio_pending(output)
        guard count > 0 else { return [] }
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let read = BIO_read(output, buffer.baseAddress, Int32(count))
            initialized = max(0, Int(read))
        }
        replaceIfGrown(input: false)
        return bytes
    }

    /// A drained memory BIO keeps the largest buffer it ever had; swapping it
    /// for an empty one gives that memory back while the connection idles.
    private func replaceIfGrown(input: Bool, beyond capacity: Int = TLSEngine.idleBIOCapacity) {
        guard let ssl else { return }
        let bio = input ? SSL_get_rbio(ssl) : SSL_get_wbio(ssl)
        guard let bio, navsync_bio_pending(bio) == 0, navsync_mem_bio_capacity(bio) > capacity,
              let fresh = navsync_new_memory_bio() else { return }
        // set0 frees the old BIO and takes the new one.
        if input { SSL_set0_rbio(ssl, fresh) } else { SSL_set0_wbio(ssl, fresh) }
    }

    /// "TLSv1.3" once established, for logs.
    public var protocolVersion: String {
        guard let ssl, let name = SSL_get_version(ssl) else { return "" }
        return String(cString: name)
    }
}

/// An output BIO that holds nothing: each write OpenSSL makes (a record, a
/// handshake flight, an alert) is handed to the engine's sink at once,
/// straight from OpenSSL's own buffer, instead of being copied into a
/// memory BIO and out again.
private enum SinkBIO {
    // Made once and never freed or changed; OpenSSL only reads it, from
    // whichever thread an engine is used on, so sharing it is safe.
    nonisolated(unsafe) static let method: OpaquePointer? = {
        guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "navsync sink") else { return nil }
        _ = BIO_meth_set_write_ex(method) { bio, data, count, written in
            guard let bio, let engine = BIO_get_data(bio) else { return 0 }
            let owner = Unmanaged<TLSEngine>.fromOpaque(engine).takeUnretainedValue()
            owner.outputSink?(UnsafeRawBufferPointer(start: data, count: count))
            written?.pointee = count
            return 1
        }
        _ = BIO_meth_set_ctrl(method) { _, command, _, _ in
            // OpenSSL flushes after each handshake flight; nothing is ever held.
            command == BIO_CTRL_FLUSH ? 1 : 0
        }
        return method
    }()
}
