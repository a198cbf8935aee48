import CNettle

/// The `Sec-WebSocket-Accept` value for a client's `Sec-WebSocket-Key`
/// (RFC 6455 section 4.2.2): base64 of the SHA-1 of the key followed by
/// the protocol's fixed GUID. It proves the server read this handshake.
public enum WebSocketAcceptKey {
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    public static func make(forKey key: String) -> String {
        let input = Array((key + guid).utf8)
        var context = sha1_ctx()
        var digest = [UInt8](repeating: 0, count: Int(SHA1_DIGEST_SIZE))
        nettle_sha1_init(&context)
        nettle_sha1_update(&context, input.count, input)
        nettle_sha1_digest(&context, digest.count, &digest)
        // 20 bytes are 28 base64 characters, padding included.
        var encoded = [CChar](repeating: 0, count: 28)
        nettle_base64_encode_raw(&encoded, digest.count, digest)
        return String(decoding: encoded.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
