import NavSyncCore

/// The record layer of an established TLS 1.3 connection, once OpenSSL's
/// SSL object has been freed (see `TLSEngine`): records in,
/// plaintext out; plaintext in, records out; KeyUpdate and alerts. All it
/// keeps is two `TLS13RecordCipher`s and at most one partial record, so an
/// idle connection costs a few KiB, and sealing a watcher's event is one
/// AEAD call with no BIO in between.
///
/// Must be used on one thread at a time.
final class TLS13Records {
    enum Outcome: Equatable {
        case open
        /// The peer's close_notify arrived; nothing after it is read.
        case peerClosed
        /// The connection must end; a fatal alert saying why waits in the output.
        case failed(String)
    }

    private enum ContentType {
        static let alert: UInt8 = 21
        static let handshake: UInt8 = 22
        static let applicationData: UInt8 = 23
    }

    private enum AlertCode {
        static let closeNotify: UInt8 = 0
        static let unexpectedMessage: UInt8 = 10
        static let badRecordMAC: UInt8 = 20
        static let recordOverflow: UInt8 = 22
        static let decodeError: UInt8 = 50
        static let internalError: UInt8 = 80
        static let userCanceled: UInt8 = 90
    }

    private let opener: TLS13RecordCipher
    private let sealer: TLS13RecordCipher
    /// A server's watchers seldom send, so its reading cipher is opened per
    /// arrival and closed after; a client reads all the time and keeps it
    /// (keying a context costs more than the AEAD of a small record).
    private let closesOpenerBetweenArrivals: Bool
    private var splitter = TLSRecordSplitter()
    private var postHandshake: TLSPostHandshakeReader

    /// `reader`: which end this is; its peer's secret opens, its own seals.
    init?(suite: TLS13Suite, clientSecret: [UInt8], serverSecret: [UInt8], end: TLSPostHandshakeReader.Reader = .server) {
        let isServer = end == .server
        guard let opener = TLS13RecordCipher(suite: suite, secret: isServer ? clientSecret : serverSecret, sealing: false),
              let sealer = TLS13RecordCipher(suite: suite, secret: isServer ? serverSecret : clientSecret, sealing: true) else { return nil }
        if isServer { opener.close() }
        closesOpenerBetweenArrivals = isServer
        self.opener = opener
        self.sealer = sealer
        postHandshake = TLSPostHandshakeReader(reader: end)
    }

    /// Opens the records `ciphertext` completes: application data goes to
    /// `plaintext`, answers (our KeyUpdate, a fatal alert) to `output`.
    func receive(_ ciphertext: UnsafeRawBufferPointer, plaintext: inout [UInt8], output: inout [UInt8]) -> Outcome {
        // A watcher sends a line now and then: its reading cipher is only open while it does.
        defer { if closesOpenerBetweenArrivals { opener.close() } }
        var outcome = Outcome.open
        do {
            try splitter.feed(ciphertext) { header, body in
                guard outcome == .open else { return }
                // Opened straight after the plaintext so far: application
                // data, nearly every record, stays there with no copy.
                let mark = plaintext.count
                guard let type = opener.open(header: header, body: body, into: &plaintext) else {
                    throw Failure(alert: AlertCode.badRecordMAC, reason: "a record did not authenticate (bad record MAC)")
                }
                if type == ContentType.applicationData {
                    do { try nonHandshakeRecordArrived() } catch {
                        // Nothing from a record that broke the rules goes up.
                        plaintext.removeSubrange(mark...)
                        throw error
                    }
                    return
                }
                let content = Array(plaintext[mark...])
                plaintext.removeSubrange(mark...)
                outcome = try take(type: type, content: content, output: &output)
            }
        } catch let failure as Failure {
            return fail(failure, output: &output)
        } catch let failure as TLSRecordSplitter.Failure {
            let alert: UInt8
            switch failure {
            case .recordTooLong: alert = AlertCode.recordOverflow
            case .recordTooShort: alert = AlertCode.decodeError
            case .unexpectedRecordType: alert = AlertCode.unexpectedMessage
            }
            return fail(Failure(alert: alert, reason: failure.description), output: &output)
        } catch {
            return fail(Failure(alert: AlertCode.internalError, reason: "\(error)"), output: &output)
        }
        return outcome
    }

    private struct Failure: Error {
        /// The fatal alert to send, or nil when the peer already ended it with one.
        let alert: UInt8?
        let reason: String
    }

    /// A record other than a handshake one must not split a handshake message.
    private func nonHandshakeRecordArrived() throws {
        do { try postHandshake.otherRecordArrived() } catch {
            throw Failure(alert: AlertCode.unexpectedMessage, reason: error.description)
        }
    }

    /// A record that is not application data: an alert or a post-handshake message.
    private func take(type: UInt8, content: [UInt8], output: inout [UInt8]) throws -> Outcome {
        if type != ContentType.handshake { try nonHandshakeRecordArrived() }
        switch type {
        case ContentType.alert:
            guard content.count == 2 else { throw Failure(alert: AlertCode.decodeError, reason: "malformed alert") }
            if content[1] == AlertCode.closeNotify { return .peerClosed }
            // user_canceled comes before a close_notify; every other alert is fatal (RFC 8446, 6).
            if content[1] == AlertCode.userCanceled { return .open }
            throw Failure(alert: nil, reason: "the peer sent TLS alert \(content[1])")
        case ContentType.handshake:
            let keyUpdate: TLSPostHandshakeReader.KeyUpdate?
            do {
                keyUpdate = try content.withUnsafeBytes { bytes throws(TLSPostHandshakeReader.Failure) in try postHandshake.read(record: bytes) }
            } catch let failure as TLSPostHandshakeReader.Failure {
                throw Failure(alert: AlertCode.unexpectedMessage, reason: failure.description)
            }
            guard let keyUpdate else { return .open }
            guard opener.update() else { throw Failure(alert: AlertCode.internalError, reason: "cannot update the read keys") }
            if keyUpdate == .updateRequested {
                // Ours goes out under the old keys, before any later record (RFC 8446, 4.6.3).
                let message = TLSPostHandshakeReader.keyUpdateMessage(requested: false)
                guard message.withUnsafeBytes({ sealer.seal($0, type: ContentType.handshake, into: &output) }), sealer.update() else {
                    throw Failure(alert: AlertCode.internalError, reason: "cannot update the write keys")
                }
            }
            return .open
        default:
            throw Failure(alert: AlertCode.unexpectedMessage, reason: "unexpected record content type \(type)")
        }
    }

    private func fail(_ failure: Failure, output: inout [UInt8]) -> Outcome {
        if let alert = failure.alert {
            // Best effort: the peer learns why, if it still listens.
            _ = [2, alert].withUnsafeBytes { sealer.seal($0, type: ContentType.alert, into: &output) }
        }
        return .failed(failure.reason)
    }

    /// Seals application data; false when the sequence or the cipher gave out.
    func send(_ plaintext: UnsafeRawBufferPointer, into output: inout [UInt8]) -> Bool {
        sealer.seal(plaintext, type: ContentType.applicationData, into: &output)
    }

    /// close_notify: nothing more follows.
    func closeNotify(into output: inout [UInt8]) {
        _ = [1, AlertCode.closeNotify].withUnsafeBytes { sealer.seal($0, type: ContentType.alert, into: &output) }
    }
}
