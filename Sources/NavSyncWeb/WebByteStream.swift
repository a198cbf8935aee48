import NavSyncCore

/// The byte stream under the web front door: what an HTTP exchange or a
/// WebSocket writes and how it holds back a client that does not read.
/// The daemon's libuv link is one today; a TLS layer that hands plaintext
/// up and takes plaintext down can be another, and nothing above it changes.
///
/// Must be used on the loop thread only.
public protocol WebByteStream: AnyObject {
    /// Bytes the door has framed or formatted itself, written in order.
    func sendRaw(_ bytes: [UInt8])
    /// Frames other connections send too (a room's turn, framed once),
    /// written in order with `sendRaw`; the stream may keep a reference to
    /// the buffer rather than copy it.
    func sendShared(_ bytes: SharedBytes)
    /// Stops reading until `resumeWebReading` (responses waiting to drain).
    func pauseWebReading()
    /// Reading may go on again, unless the stream holds it back for reasons of its own.
    func resumeWebReading()
    /// Bytes written and not yet sent, with what holding them costs.
    var queuedWriteBytes: Int { get }
    /// True when the connection is inside TLS: the daemon's own page then
    /// comes from `https://` + `Host`, and that is the origin its upgrades carry.
    var isEncrypted: Bool { get }
}

extension WebByteStream {
    /// A stream that cannot share a buffer writes a copy of it.
    public func sendShared(_ bytes: SharedBytes) { sendRaw(bytes.array) }
}
