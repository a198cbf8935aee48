import COpenSSL
import Glibc
import NavSyncCore

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
/// A connection that negotiated TLS 1.3 with one of its three standard
/// suites does not keep OpenSSL's SSL object past the handshake: the
/// application traffic secrets (from OpenSSL's key log) key a
/// `TLS13Records`, and the SSL object (~14 KiB live) is freed. An idle
/// encrypted watcher then costs a few KiB on the server, and each record is
/// one AEAD call of OpenSSL's with no BIO in between, on both ends. TLS 1.2
/// connections and other suites stay with the SSL object throughout.
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
    private let isServer: Bool
    /// False only for tests that need OpenSSL's own record layer as the peer.
    private let handsOverRecords: Bool
    /// The application traffic secrets, from the key log, until the handover.
    private var clientTrafficSecret: [UInt8]?
    private var serverTrafficSecret: [UInt8]?
    /// Established TLS 1.3 after the handover: `ssl` is nil then.
    private var records: TLS13Records?
    /// Records made by `records`, waiting to be taken.
    private var recordOutput: [UInt8] = []
    private var handedOverVersion: String?
    /// A memory BIO that had grown past this when drained is swapped for a fresh one.
    static let idleBIOCapacity = 4 * 1024
    /// Plaintext read per SSL_read_ex call: one record's worth.
    static let readChunk = 16 * 1024

    /// The server side of a connection accepted on a TLS listener.
    public convenience init(server context: TLSServerContext) throws(TLSError) {
        try self.init(server: context, handsOverRecords: true)
    }

    /// A server that may keep OpenSSL's record layer (the tests' peer for the client's own).
    init(server context: TLSServerContext, handsOverRecords: Bool) throws(TLSError) {
        retainedContext = context
        isServer = true
        self.handsOverRecords = handsOverRecords
        let ssl = try Self.makeSSL(context.pointer)
        self.ssl = ssl
        // The key log callback finds this engine here; the SSL object is
        // this engine's and freed before it, so an unretained pointer suffices.
        SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
        SSL_set_accept_state(ssl)
    }

    /// The client side; the peer's certificate must name `serverName` (a DNS
    /// name or an IP literal, without brackets).
    public convenience init(client context: TLSClientContext, serverName: String) throws(TLSError) {
        try self.init(client: context, serverName: serverName, maximumTLS12: false, cipherSuites: nil, handsOverRecords: true)
    }

    /// A client limited to TLS 1.2 or to some TLS 1.3 suites, or keeping
    /// OpenSSL's record layer (the tests' peers of every kind).
    init(client context: TLSClientContext, serverName: String, maximumTLS12: Bool, cipherSuites: String?,
         handsOverRecords: Bool) throws(TLSError) {
        retainedContext = context
        isServer = false
        self.handsOverRecords = handsOverRecords
        let ssl = try Self.makeSSL(context.pointer)
        self.ssl = ssl
        // As for a server: the key log callback finds this engine here.
        SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
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
        if maximumTLS12 { _ = navsync_ssl_set_max_tls12(ssl) }
        if let cipherSuites { _ = SSL_set_ciphersuites(ssl, cipherSuites) }
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
        records = nil
        recordOutput = []
        forgetTrafficSecrets()
    }

    // MARK: Input

    /// Takes ciphertext from the peer and returns the plaintext it completes
    /// (empty while the handshake runs or a record is partial). Check
    /// `state` afterwards, and send `takeOutgoing()`: the handshake, alerts
    /// and tickets are answers to input.
    public func receive(_ ciphertext: UnsafeRawBufferPointer) -> [UInt8] {
        guard !ciphertext.isEmpty else { return [] }
        switch state {
        case .handshaking, .established: break
        case .peerClosed, .failed: return []
        }
        if records != nil { return receiveRecords(ciphertext) }
        guard let ssl else { return [] }
        let input = SSL_get_rbio(ssl)
        // A memory BIO takes everything (it grows), so one write suffices.
        _ = BIO_write(input, ciphertext.baseAddress, Int32(ciphertext.count))
        if state == .handshaking {
            advanceHandshake()
            if state == .established, let unread = handOverRecords() {
                return unread.withUnsafeBytes { receiveRecords($0) }
            }
        }
        var plaintext: [UInt8] = []
        if state == .established { readPlaintext(into: &plaintext) }
        if navsync_bio_pending(input) == 0 { replaceIfGrown(input: true) }
        return plaintext
    }

    private func receiveRecords(_ ciphertext: UnsafeRawBufferPointer) -> [UInt8] {
        guard let records, !ciphertext.isEmpty else { return [] }
        var plaintext: [UInt8] = []
        switch records.receive(ciphertext, plaintext: &plaintext, output: &recordOutput) {
        case .open: break
        case .peerClosed: state = .peerClosed
        case .failed(let reason): state = .failed(reason)
        }
        return plaintext
    }

    // MARK: Handover

    /// OpenSSL's key log line for this connection's SSL object.
    fileprivate func noteKeyLog(_ line: UnsafePointer<CChar>) {
        let entry = UnsafeRawBufferPointer(start: line, count: strlen(line))
        guard let logged = TLSKeyLogLine(entry) else { return }
        switch logged.label {
        case .clientTraffic: clientTrafficSecret = logged.secret
        case .serverTraffic: serverTrafficSecret = logged.secret
        }
    }

    /// Once a TLS 1.3 handshake is done: the records from now on are this
    /// engine's own, and the SSL object goes. Returns the ciphertext OpenSSL
    /// had not read (records that came with the client's Finished, or a
    /// server's first records after its own), or nil when the connection
    /// stays with OpenSSL.
    private func handOverRecords() -> [UInt8]? {
        defer { forgetTrafficSecrets() }
        guard handsOverRecords, let ssl, SSL_version(ssl) == TLS1_3_VERSION,
              let cipher = SSL_get_current_cipher(ssl),
              let suite = TLS13Suite(id: UInt16(truncatingIfNeeded: SSL_CIPHER_get_id(cipher))),
              let clientTrafficSecret, let serverTrafficSecret,
              let records = TLS13Records(suite: suite, clientSecret: clientTrafficSecret, serverSecret: serverTrafficSecret,
                                         end: isServer ? .server : .client)
        else { return nil }
        // This end's last flight (a client's Finished) may still wait to be taken; it goes first.
        recordOutput = takeOutgoing()
        let input = SSL_get_rbio(ssl)
        let unread = [UInt8](unsafeUninitializedCapacity: navsync_bio_pending(input)) { buffer, initialized in
            initialized = buffer.isEmpty ? 0 : max(0, Int(BIO_read(input, buffer.baseAddress, Int32(buffer.count))))
        }
        handedOverVersion = protocolVersion
        SSL_free(ssl)
        self.ssl = nil
        self.records = records
        return unread
    }

    private func forgetTrafficSecrets() {
        for index in clientTrafficSecret?.indices ?? 0..<0 { clientTrafficSecret?[index] = 0 }
        for index in serverTrafficSecret?.indices ?? 0..<0 { serverTrafficSecret?[index] = 0 }
        clientTrafficSecret = nil
        serverTrafficSecret = nil
    }

    /// Handed to OpenSSL as the server context's key log callback.
    static let keyLogCallback: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Void = { ssl, line in
        guard let ssl, let line, let engine = SSL_get_ex_data(ssl, 0) else { return }
        Unmanaged<TLSEngine>.fromOpaque(engine).takeUnretainedValue().noteKeyLog(line)
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
        guard state == .established || state == .peerClosed else { return false }
        guard !plaintext.isEmpty else { return true }
        if let records {
            guard records.send(plaintext, into: &recordOutput) else {
                state = .failed("cannot seal a record")
                return false
            }
            return true
        }
        guard let ssl else { return false }
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
        guard state == .established || state == .peerClosed else { return }
        if let records {
            records.closeNotify(into: &recordOutput)
            return
        }
        guard let ssl else { return }
        OpenSSLErrors.clear()
        _ = SSL_shutdown(ssl)
        OpenSSLErrors.clear()
    }

    /// Bytes OpenSSL wants on the wire.
    public var outgoingCount: Int {
        guard let ssl else { return recordOutput.count }
        return navsync_bio_pending(SSL_get_wbio(ssl))
    }

    /// Offers the bytes waiting to go on the wire to `offer`, which returns
    /// how many leading bytes it took (the kernel, without blocking), and
    /// returns the rest, now the caller's to queue (empty when all went:
    /// the usual case). Unlike `takeOutgoing`, the records need not be
    /// moved into an array of their own first, and the record buffer keeps
    /// a small capacity for the next event instead of a heap round trip per
    /// watcher per turn.
    public func offerOutgoing(_ offer: (UnsafeRawBufferPointer) -> Int) -> [UInt8] {
        guard ssl == nil else {
            let bytes = takeOutgoing()
            let taken = bytes.withUnsafeBytes(offer)
            return taken < bytes.count ? Array(bytes[taken...]) : []
        }
        guard !recordOutput.isEmpty else { return [] }
        let taken = recordOutput.withUnsafeBytes(offer)
        guard taken < recordOutput.count else {
            recordOutput.removeAll(keepingCapacity: recordOutput.capacity <= Self.keptRecordCapacity)
            return []
        }
        let rest = Array(recordOutput[taken...])
        recordOutput = []
        return rest
    }

    /// The record buffer's capacity an idle connection may keep: one
    /// event's record, so the broadcast path does not allocate, and never
    /// what a burst needed.
    static let keptRecordCapacity = 192

    /// What the record buffer holds on to now (tests: the idle bound).
    var recordBufferCapacity: Int { recordOutput.capacity }

    /// Takes every byte waiting to go on the wire (empty when none).
    public func takeOutgoing() -> [UInt8] {
        guard let ssl else {
            let records = recordOutput
            // Not removeAll(keepingCapacity:): an idle connection keeps no buffer.
            recordOutput = []
            return records
        }
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
    private func replaceIfGrown(input: Bool) {
        guard let ssl else { return }
        let bio = input ? SSL_get_rbio(ssl) : SSL_get_wbio(ssl)
        guard let bio, navsync_bio_pending(bio) == 0, navsync_mem_bio_capacity(bio) > Self.idleBIOCapacity,
              let fresh = navsync_new_memory_bio() else { return }
        // set0 frees the old BIO and takes the new one.
        if input { SSL_set0_rbio(ssl, fresh) } else { SSL_set0_wbio(ssl, fresh) }
    }

    /// Whether OpenSSL's SSL object still carries the connection (false
    /// once a TLS 1.3 server connection has its own record layer).
    var holdsOpenSSLConnection: Bool { ssl != nil }

    /// Asks OpenSSL for a KeyUpdate (a client's: a server's records are its
    /// own after the handshake); `requestingPeer` asks the peer for one too.
    @discardableResult
    func updateKeys(requestingPeer: Bool) -> Bool {
        guard let ssl, state == .established else { return false }
        return SSL_key_update(ssl, requestingPeer ? SSL_KEY_UPDATE_REQUESTED : SSL_KEY_UPDATE_NOT_REQUESTED) == 1
            && SSL_do_handshake(ssl) == 1
    }

    /// "TLSv1.3" once established, for logs.
    public var protocolVersion: String {
        if let handedOverVersion { return handedOverVersion }
        guard let ssl, let name = SSL_get_version(ssl) else { return "" }
        return String(cString: name)
    }
}
