import NavSyncTLS

// The two ends of a TLS connection joined in memory, for the engine's and
// the record layer's tests: no sockets, so every byte's path is visible.

/// Moves bytes both ways until neither engine has any to send, in pieces of
/// `piece` bytes (nil: each flight whole); returns the plaintext each got.
@discardableResult
func pump(_ client: TLSEngine, _ server: TLSEngine, piece: Int? = nil) -> (client: [UInt8], server: [UInt8]) {
    var toClient: [UInt8] = [], toServer: [UInt8] = []
    for _ in 0..<10_000 {
        let fromClient = client.takeOutgoing(), fromServer = server.takeOutgoing()
        if fromClient.isEmpty && fromServer.isEmpty { break }
        toServer += feed(server, fromClient, piece: piece)
        toClient += feed(client, fromServer, piece: piece)
    }
    return (toClient, toServer)
}

/// Hands `bytes` to `engine` whole, or `piece` bytes at a time; returns the
/// plaintext that came out.
func feed(_ engine: TLSEngine, _ bytes: [UInt8], piece: Int?) -> [UInt8] {
    guard let piece else { return engine.receive(bytes) }
    var plaintext: [UInt8] = []
    var index = 0
    while index < bytes.count {
        let end = min(bytes.count, index + piece)
        plaintext += engine.receive(Array(bytes[index..<end]))
        index = end
    }
    return plaintext
}
