import COpenSSL
import NavSyncCore

/// The TLS 1.3 cipher suites whose records a server engine protects itself
/// once the handshake is over (all three that TLS 1.3 defines for general use).
struct TLS13Suite {
    let keyLength: Int
    let cipher: () -> OpaquePointer?
    let digest: () -> OpaquePointer?
    let hashLength: Int

    /// The suite of a negotiated cipher's two-byte id, or nil for one left to OpenSSL.
    init?(id: UInt16) {
        switch id {
        case 0x1301: self.init(keyLength: 16, cipher: { EVP_aes_128_gcm() }, digest: { EVP_sha256() }, hashLength: 32)
        case 0x1302: self.init(keyLength: 32, cipher: { EVP_aes_256_gcm() }, digest: { EVP_sha384() }, hashLength: 48)
        case 0x1303: self.init(keyLength: 32, cipher: { EVP_chacha20_poly1305() }, digest: { EVP_sha256() }, hashLength: 32)
        default: return nil
        }
    }

    private init(keyLength: Int, cipher: @escaping () -> OpaquePointer?, digest: @escaping () -> OpaquePointer?, hashLength: Int) {
        self.keyLength = keyLength
        self.cipher = cipher
        self.digest = digest
        self.hashLength = hashLength
    }

    /// HKDF-Expand-Label (RFC 8446, 7.1) with an empty context, for
    /// outputs no longer than the hash: one HMAC over the label.
    func expandLabel(secret: [UInt8], label: String, length: Int) -> [UInt8]? {
        guard length <= hashLength, let digest = digest() else { return nil }
        let fullLabel = Array("tls13 \(label)".utf8)
        var info: [UInt8] = [UInt8(length >> 8), UInt8(length & 0xff), UInt8(fullLabel.count)]
        info += fullLabel
        info.append(0)  // the empty context
        info.append(1)  // T(1): the first and only block
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var outputLength: UInt32 = 0
        let made = secret.withUnsafeBytes { key in
            info.withUnsafeBufferPointer { message in
                HMAC(digest, key.baseAddress, Int32(key.count), message.baseAddress, message.count, &output, &outputLength)
            }
        }
        guard made != nil, Int(outputLength) == hashLength else { return nil }
        return Array(output.prefix(length))
    }
}

/// One direction of a TLS 1.3 connection's record protection: the AEAD
/// keyed from a traffic secret, the per-record nonce (the IV XORed with the
/// record's sequence number) and the KeyUpdate that replaces the secret.
/// OpenSSL does the cipher work; this holds about 1 KiB while its cipher
/// context is open, a hundred bytes while it is not, where an SSL object
/// would hold ~14 KiB (docs/PERFORMANCE.md).
///
/// Must be used on one thread at a time.
final class TLS13RecordCipher {
    static let tagLength = 16
    /// TLSInnerPlaintext may carry at most 2^14 bytes of content.
    static let maxContentLength = 16_384

    private let suite: TLS13Suite
    private let sealing: Bool
    /// `EVP_CIPHER_CTX *`, owned, keyed with `key`; nil while closed (`close`).
    private var context: OpaquePointer?
    private var secret: [UInt8]
    private var key: [UInt8] = []
    private var iv: [UInt8] = []
    private var sequence: UInt64 = 0

    init?(suite: TLS13Suite, secret: [UInt8], sealing: Bool) {
        self.suite = suite
        self.sealing = sealing
        self.secret = secret
        guard rekey(from: secret), open() else { return nil }
    }

    deinit {
        close()
        Self.cleanse(&secret)
        Self.cleanse(&key)
        Self.cleanse(&iv)
    }

    /// Makes the cipher context ready (a no-op when it is); false when OpenSSL cannot.
    func open() -> Bool {
        if context != nil { return true }
        guard let made = EVP_CIPHER_CTX_new() else { return false }
        guard EVP_CipherInit_ex(made, suite.cipher(), nil, key, nil, sealing ? 1 : 0) == 1 else {
            EVP_CIPHER_CTX_free(made)
            return false
        }
        context = made
        return true
    }

    /// Frees the cipher context (~1 KiB with its key schedule) until `open`:
    /// the reading side of a watcher that seldom sends anything.
    func close() {
        if let context { EVP_CIPHER_CTX_free(context) }
        context = nil
    }

    /// KeyUpdate: the next secret, key and IV; the sequence starts again at zero.
    func update() -> Bool {
        guard let next = suite.expandLabel(secret: secret, label: "traffic upd", length: suite.hashLength) else { return false }
        Self.cleanse(&secret)
        secret = next
        return rekey(from: next)
    }

    private func rekey(from secret: [UInt8]) -> Bool {
        guard let key = suite.expandLabel(secret: secret, label: "key", length: suite.keyLength),
              let iv = suite.expandLabel(secret: secret, label: "iv", length: 12) else { return false }
        Self.cleanse(&self.key)
        Self.cleanse(&self.iv)
        self.key = key
        self.iv = iv
        sequence = 0
        guard let context else { return true }
        return EVP_CipherInit_ex(context, suite.cipher(), nil, key, nil, sealing ? 1 : 0) == 1
    }

    /// The nonce of the next record, set on the context; false once the
    /// sequence is spent (2^64 records: the connection must end).
    private func startRecord() -> Bool {
        guard sequence < UInt64.max, open() else { return false }
        let number = sequence
        sequence += 1
        // On the stack: this runs once per record, on the broadcast path.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 12) { nonce in
            for index in 0..<12 { nonce[index] = iv[index] }
            for index in 0..<8 { nonce[4 + index] ^= UInt8(truncatingIfNeeded: number >> (56 - 8 * UInt64(index))) }
            return EVP_CipherInit_ex(context, nil, nil, nil, nonce.baseAddress, -1) == 1
        }
    }

    /// Appends records carrying `content` as `type` (several when it is
    /// longer than a record holds) to `output`.
    func seal(_ content: UnsafeRawBufferPointer, type: UInt8, into output: inout [UInt8]) -> Bool {
        var offset = 0
        repeat {
            let count = min(Self.maxContentLength, content.count - offset)
            guard sealRecord(UnsafeRawBufferPointer(rebasing: content[offset..<(offset + count)]), type: type, into: &output) else { return false }
            offset += count
        } while offset < content.count
        return true
    }

    private func sealRecord(_ content: UnsafeRawBufferPointer, type: UInt8, into output: inout [UInt8]) -> Bool {
        let bodyLength = content.count + 1 + Self.tagLength
        guard startRecord() else { return false }
        let start = output.count
        output.reserveCapacity(start + TLSRecordSplitter.headerLength + bodyLength)
        TLSRecordSplitter.appendHeader(bodyLength: bodyLength, to: &output)
        output += repeatElement(0, count: bodyLength)
        var typeByte = type
        var produced: Int32 = 0
        return output.withUnsafeMutableBytes { buffer in
            // The header just written is the record's additional data.
            let header = buffer.baseAddress! + start
            let body = header + TLSRecordSplitter.headerLength
            guard EVP_CipherUpdate(context, nil, &produced, header, Int32(TLSRecordSplitter.headerLength)) == 1 else { return false }
            if content.count > 0 {
                guard EVP_CipherUpdate(context, body, &produced, content.baseAddress, Int32(content.count)) == 1,
                      Int(produced) == content.count else { return false }
            }
            guard EVP_CipherUpdate(context, body + content.count, &produced, &typeByte, 1) == 1, produced == 1,
                  EVP_CipherFinal_ex(context, body + content.count + 1, &produced) == 1 else { return false }
            return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(Self.tagLength), body + content.count + 1) == 1
        }
    }

    /// Opens one record: its content is appended to `output` and its real
    /// type returned; nil when the record does not authenticate or is all padding.
    func open(header: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer, into output: inout [UInt8]) -> UInt8? {
        let sealedCount = body.count - Self.tagLength
        guard sealedCount > 0, startRecord() else { return nil }
        let start = output.count
        output += repeatElement(0, count: sealedCount)
        var produced: Int32 = 0
        let authentic = output.withUnsafeMutableBytes { buffer -> Bool in
            let opened = buffer.baseAddress! + start
            // The tag is only read, but OpenSSL's signature takes a mutable pointer.
            let tag = UnsafeMutableRawPointer(mutating: body.baseAddress! + sealedCount)
            return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagLength), tag) == 1
                && EVP_CipherUpdate(context, nil, &produced, header.baseAddress, Int32(header.count)) == 1
                && EVP_CipherUpdate(context, opened, &produced, body.baseAddress, Int32(sealedCount)) == 1
                && EVP_CipherFinal_ex(context, opened + Int(produced), &produced) == 1
        }
        guard authentic else {
            output.removeSubrange(start...)
            return nil
        }
        let inner = output.withUnsafeBytes { TLSInnerPlaintext.split(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        guard let inner, inner.contentLength <= Self.maxContentLength else {
            output.removeSubrange(start...)
            return nil
        }
        output.removeSubrange((start + inner.contentLength)...)
        return inner.type
    }

    private static func cleanse(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
    }
}
