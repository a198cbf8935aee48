/// Handshake messages that may come once a TLS 1.3 handshake is over, when
/// no certificate is asked for afterwards: a server reads only KeyUpdate
/// from its client (RFC 8446, 4.6.3); a client reads KeyUpdate and
/// NewSessionTicket, which it passes over (it keeps no sessions).
/// Anything else ends the connection.
///
/// A message may be split over records. The reader keeps at most a
/// message header's four bytes between them (a ticket is counted down,
/// not kept). A KeyUpdate must end its record: what follows it is
/// protected with the next keys (RFC 8446, 5.1).
public struct TLSPostHandshakeReader: Sendable {
    /// Which end reads: the messages allowed depend on it.
    public enum Reader: Sendable {
        case server
        case client
    }

    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        case unexpectedMessage(UInt8)
        case badKeyUpdate
        case keyUpdateNotAtRecordEnd
        case splitAcrossOtherRecords

        public var description: String {
            switch self {
            case .unexpectedMessage(let type): return "unexpected handshake message \(type) after the handshake"
            case .badKeyUpdate: return "malformed KeyUpdate"
            case .keyUpdateNotAtRecordEnd: return "a KeyUpdate was not the last message of its record"
            case .splitAcrossOtherRecords: return "a handshake message was interleaved with other records"
            }
        }
    }

    /// A KeyUpdate's one field: whether the sender wants one back.
    public enum KeyUpdate: Equatable, Sendable {
        case updateNotRequested
        case updateRequested
    }

    static let keyUpdate: UInt8 = 24
    static let newSessionTicket: UInt8 = 4
    private let reader: Reader
    private var header: [UInt8] = []
    /// Bytes of a NewSessionTicket still to pass over.
    private var skipping = 0
    private var awaitingKeyUpdateField = false

    public init(reader: Reader = .server) {
        self.reader = reader
    }

    /// True while a message begun in an earlier record is incomplete.
    public var isMidMessage: Bool { !header.isEmpty || skipping > 0 || awaitingKeyUpdateField }

    /// Reads one record's handshake content. Returns nil, or the KeyUpdate it ends with.
    public mutating func read(record content: UnsafeRawBufferPointer) throws(Failure) -> KeyUpdate? {
        var index = 0
        while index < content.count {
            if skipping > 0 {
                let passed = min(skipping, content.count - index)
                skipping -= passed
                index += passed
                continue
            }
            if awaitingKeyUpdateField {
                let request = content[index]
                index += 1
                awaitingKeyUpdateField = false
                guard request <= 1 else { throw .badKeyUpdate }
                guard index == content.count else { throw .keyUpdateNotAtRecordEnd }
                return request == 1 ? .updateRequested : .updateNotRequested
            }
            header.append(content[index])
            index += 1
            if header.count == 1 {
                let allowed = header[0] == Self.keyUpdate || (reader == .client && header[0] == Self.newSessionTicket)
                guard allowed else { throw .unexpectedMessage(header[0]) }
            } else if header.count == 4 {
                let length = Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
                let type = header[0]
                // A fresh empty array: nothing is kept between messages.
                header = []
                if type == Self.keyUpdate {
                    guard length == 1 else { throw .badKeyUpdate }
                    awaitingKeyUpdateField = true
                } else {
                    skipping = length
                }
            }
        }
        return nil
    }

    /// A record of another type arrived: a message split over records must not be interrupted.
    public func otherRecordArrived() throws(Failure) {
        if isMidMessage { throw .splitAcrossOtherRecords }
    }

    /// The KeyUpdate this end sends: `requested` asks the peer to update its keys too.
    public static func keyUpdateMessage(requested: Bool) -> [UInt8] {
        [keyUpdate, 0, 0, 1, requested ? 1 : 0]
    }
}
