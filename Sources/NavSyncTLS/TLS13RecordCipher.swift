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
    /// The IV as three words, loaded as its bytes lie in memory: the
    /// per-record nonce is two XORs on a copy of them, no byte loop.
    private var ivWords: (UInt32, UInt32, UInt32) = (0, 0, 0)
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
        ivWords = (0, 0, 0)
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
              var iv = suite.expandLabel(secret: secret, label: "iv", length: 12) else { return false }
        Self.cleanse(&self.key)
        self.key = key
        ivWords = iv.withUnsafeBytes {
            ($0.loadUnaligned(fromByteOffset: 0, as: UInt32.self), $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self),
             $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        }
        Self.cleanse(&iv)
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
        // The sequence number, big-endian, XORed into the IV's last eight
        // bytes (RFC 8446, 5.3). On the stack: this runs once per record,
        // on the broadcast path. A tuple of three UInt32 is 12 bytes with no padding.
        var nonce = ivWords
        nonce.1 ^= UInt32(truncatingIfNeeded: number >> 32).bigEndian
        nonce.2 ^= UInt32(truncatingIfNeeded: number).bigEndian
        return withUnsafeBytes(of: &nonce) { bytes in
            EVP_CipherInit_ex(context, nil, nil, nil, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), -1) == 1
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

    /// The record is laid out in `output` as it will be sent (header,
    /// content, type byte, room for the tag) and encrypted in place, as
    /// OpenSSL's own record layer does: one cipher call for content and type.
    private func sealRecord(_ content: UnsafeRawBufferPointer, type: UInt8, into output: inout [UInt8]) -> Bool {
        let sealedLength = content.count + 1
        let bodyLength = sealedLength + Self.tagLength
        guard startRecord() else { return false }
        let start = output.count
        output.reserveCapacity(start + TLSRecordSplitter.headerLength + bodyLength)
        TLSRecordSplitter.appendHeader(bodyLength: bodyLength, to: &output)
        output.append(contentsOf: content)
        output.append(type)
        output.append(contentsOf: Self.tagRoom)
        var produced: Int32 = 0
        let sealed = output.withUnsafeMutableBytes { buffer in
            // The header just written is the record's additional data.
            let header = buffer.baseAddress! + start
            let body = header + TLSRecordSplitter.headerLength
            return EVP_CipherUpdate(context, nil, &produced, header, Int32(TLSRecordSplitter.headerLength)) == 1
                && EVP_CipherUpdate(context, body, &produced, body, Int32(sealedLength)) == 1
                && Int(produced) == sealedLength
                && EVP_CipherFinal_ex(context, body + sealedLength, &produced) == 1
                && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(Self.tagLength), body + sealedLength) == 1
        }
        // Nothing half-made goes out: the plaintext laid out above must not reach the wire.
        if !sealed { output.removeSubrange(start...) }
        return sealed
    }

    /// Where the tag goes until the cipher writes it.
    private static let tagRoom = [UInt8](repeating: 0, count: tagLength)

    /// Opens one record: its content is appended to `output` and its real
    /// type returned; nil when the record does not authenticate or is all padding.
    func open(header: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer, into output: inout [UInt8]) -> UInt8? {
        let sealedCount = body.count - Self.tagLength
        guard sealedCount > 0, startRecord() else { return nil }
        let start = output.count
        // Copied, then decrypted in place: no zero fill first.
        output.append(contentsOf: UnsafeRawBufferPointer(rebasing: body[..<sealedCount]))
        var produced: Int32 = 0
        let authentic = output.withUnsafeMutableBytes { buffer -> Bool in
            let opened = buffer.baseAddress! + start
            // The tag is only read, but OpenSSL's signature takes a mutable pointer.
            let tag = UnsafeMutableRawPointer(mutating: body.baseAddress! + sealedCount)
            return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagLength), tag) == 1
                && EVP_CipherUpdate(context, nil, &produced, header.baseAddress, Int32(header.count)) == 1
                && EVP_CipherUpdate(context, opened, &produced, opened, Int32(sealedCount)) == 1
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
