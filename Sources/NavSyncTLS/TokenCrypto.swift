import COpenSSL
import NavSyncCore

/// The cryptography of signed tokens, from OpenSSL 3: HMAC-SHA256 (compared
/// with `CRYPTO_memcmp`, in constant time), Ed25519 signing, verification
/// and key making, and the system's secure random bytes. Nothing here is
/// written by hand; the pointers stay inside this file and every call
/// takes and returns plain byte arrays.
public struct TokenCrypto: TokenSignatures {
    public init() {}

    public func verify(signature: [UInt8], of message: ArraySlice<UInt8>, with key: TokenKey) -> Bool {
        switch key.material {
        case .hs256(let secret):
            guard signature.count == 32, let expected = Self.hmacSHA256(key: secret, message: message) else { return false }
            return signature.withUnsafeBytes { given in
                expected.withUnsafeBytes { CRYPTO_memcmp(given.baseAddress, $0.baseAddress, 32) == 0 }
            }
        case .ed25519(let publicKey):
            return Self.ed25519Verify(publicKey: publicKey, signature: signature, message: message)
        case .ed25519Private:
            // The daemon never holds one (TokenKeysFile refuses it).
            return false
        }
    }

    /// The signature `key` makes of `message`; nil when the key cannot
    /// sign (a public key) or OpenSSL failed.
    public func sign(_ message: [UInt8], with key: TokenKey) -> [UInt8]? {
        switch key.material {
        case .hs256(let secret): return Self.hmacSHA256(key: secret, message: message[...])
        case .ed25519Private(let seed): return Self.ed25519Sign(seed: seed, message: message)
        case .ed25519: return nil
        }
    }

    /// `count` bytes from the operating system's secure random source
    /// (OpenSSL's RAND_bytes); nil when it cannot give them.
    public static func randomBytes(_ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        return ok == 1 ? bytes : nil
    }

    /// The public key of an Ed25519 seed.
    public static func ed25519PublicKey(seed: [UInt8]) -> [UInt8]? {
        guard seed.count == 32, let pkey = seed.withUnsafeBufferPointer({
            EVP_PKEY_new_raw_private_key(navsync_pkey_ed25519(), nil, $0.baseAddress, 32)
        }) else { return nil }
        defer { EVP_PKEY_free(pkey) }
        var publicKey = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_get_raw_public_key(pkey, &publicKey, &length) == 1, length == 32 else { return nil }
        return publicKey
    }

    static func hmacSHA256(key: [UInt8], message: ArraySlice<UInt8>) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let done = key.withUnsafeBufferPointer { keyBytes in
            message.withUnsafeBufferPointer { messageBytes in
                HMAC(EVP_sha256(), keyBytes.baseAddress, Int32(keyBytes.count),
                     messageBytes.baseAddress, messageBytes.count, &out, &length)
            }
        }
        return done != nil && length == 32 ? out : nil
    }

    static func ed25519Verify(publicKey: [UInt8], signature: [UInt8], message: ArraySlice<UInt8>) -> Bool {
        guard publicKey.count == 32, signature.count == 64,
              let pkey = publicKey.withUnsafeBufferPointer({
                  EVP_PKEY_new_raw_public_key(navsync_pkey_ed25519(), nil, $0.baseAddress, 32)
              }) else { return false }
        defer { EVP_PKEY_free(pkey) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        // Ed25519 hashes internally: no digest is named (NULL).
        guard EVP_DigestVerifyInit(context, nil, nil, nil, pkey) == 1 else { return false }
        return signature.withUnsafeBufferPointer { signatureBytes in
            message.withUnsafeBufferPointer { messageBytes in
                EVP_DigestVerify(context, signatureBytes.baseAddress, 64, messageBytes.baseAddress, messageBytes.count) == 1
            }
        }
    }

    static func ed25519Sign(seed: [UInt8], message: [UInt8]) -> [UInt8]? {
        guard seed.count == 32, let pkey = seed.withUnsafeBufferPointer({
            EVP_PKEY_new_raw_private_key(navsync_pkey_ed25519(), nil, $0.baseAddress, 32)
        }) else { return nil }
        defer { EVP_PKEY_free(pkey) }
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, nil, nil, pkey) == 1 else { return nil }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        let done = message.withUnsafeBufferPointer {
            EVP_DigestSign(context, &signature, &length, $0.baseAddress, $0.count)
        }
        return done == 1 && length == 64 ? signature : nil
    }
}
