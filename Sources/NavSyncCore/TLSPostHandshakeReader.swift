/// Handshake messages a TLS 1.3 client may send once the handshake is
/// over, when the server does not ask for certificates: KeyUpdate only
/// (RFC 8446, 4.6.3). Anything else ends the connection.
///
/// A message may be split over records; the reader keeps at most one
/// message's five bytes between them. A KeyUpdate must end its record:
/// what follows it is protected with the next keys (RFC 8446, 5.1).
public struct TLSPostHandshakeReader: Sendable {
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
    private var pending: [UInt8] = []

    public init() {}

    /// True while a message begun in an earlier record is incomplete.
    public var isMidMessage: Bool { !pending.isEmpty }

    /// Reads one record's handshake content. Returns nil, or the KeyUpdate it ends with.
    public mutating func read(record content: UnsafeRawBufferPointer) throws(Failure) -> KeyUpdate? {
        var index = 0
        while index < content.count {
            pending.append(content[index])
            index += 1
            if pending.count == 1 {
                guard pending[0] == Self.keyUpdate else { throw .unexpectedMessage(pending[0]) }
            } else if pending.count == 4 {
                let length = Int(pending[1]) << 16 | Int(pending[2]) << 8 | Int(pending[3])
                guard length == 1 else { throw .badKeyUpdate }
            } else if pending.count == 5 {
                let request = pending[4]
                pending = []
                guard request <= 1 else { throw .badKeyUpdate }
                guard index == content.count else { throw .keyUpdateNotAtRecordEnd }
                return request == 1 ? .updateRequested : .updateNotRequested
            }
        }
        return nil
    }

    /// A record of another type arrived: a message split over records must not be interrupted.
    public func otherRecordArrived() throws(Failure) {
        if isMidMessage { throw .splitAcrossOtherRecords }
    }

    /// The KeyUpdate a server sends: `requested` asks the peer to update its keys too.
    public static func keyUpdateMessage(requested: Bool) -> [UInt8] {
        [keyUpdate, 0, 0, 1, requested ? 1 : 0]
    }
}
