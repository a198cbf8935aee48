/// Cuts protected TLS 1.3 records out of a byte stream, after the
/// handshake, so they can be opened one at a time. Pure: no cryptography
/// and no IO, so it is tested byte by byte and fuzzed on its own.
///
/// After the handshake every record of TLS 1.3 has the outer type
/// application_data (23); its real type is sealed inside. Any other outer
/// type, or a length no protected record can have, ends the connection.
///
/// Memory: records that arrive whole are handed on from the caller's
/// buffer without a copy; only a partial record is kept (at most one
/// record, ~16.6 KiB), and that buffer is given back once the record is
/// complete, so an idle connection holds nothing here.
public struct TLSRecordSplitter: Sendable {
    public static let headerLength = 5
    /// TLSCiphertext.length may reach 2^14 + 256 (RFC 8446, 5.2).
    public static let maxBodyLength = 16_384 + 256
    /// One byte of sealed content type and a 16-byte AEAD tag.
    public static let minBodyLength = 17
    static let applicationData: UInt8 = 23

    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        case unexpectedRecordType(UInt8)
        case recordTooLong(Int)
        case recordTooShort(Int)

        public var description: String {
            switch self {
            case .unexpectedRecordType(let type): return "unexpected record type \(type) after the handshake"
            case .recordTooLong(let length): return "record of \(length) bytes is longer than TLS allows"
            case .recordTooShort(let length): return "record of \(length) bytes is too short to be protected"
            }
        }
    }

    /// The start of a record that has not arrived whole.
    private var partial: [UInt8] = []

    public init() {}

    /// Bytes of a record still waiting for the rest.
    public var bufferedCount: Int { partial.count }

    /// Takes the next bytes of the stream and calls `record` with the
    /// header and the body of every record they complete, in order. Throws
    /// at the first header no protected record can have (nothing after it
    /// is looked at), or whatever `record` throws.
    public mutating func feed(
        _ bytes: UnsafeRawBufferPointer,
        record: (_ header: UnsafeRawBufferPointer, _ body: UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var rest = bytes
        if !partial.isEmpty {
            rest = try completePartial(from: rest, record: record)
            if !partial.isEmpty { return }
        }
        while rest.count >= Self.headerLength {
            let length = try Self.bodyLength(ofHeader: UnsafeRawBufferPointer(rebasing: rest[..<Self.headerLength]))
            let total = Self.headerLength + length
            guard rest.count >= total else { break }
            try record(UnsafeRawBufferPointer(rebasing: rest[..<Self.headerLength]),
                       UnsafeRawBufferPointer(rebasing: rest[Self.headerLength..<total]))
            rest = UnsafeRawBufferPointer(rebasing: rest[total...])
        }
        if !rest.isEmpty { partial = Array(rest) }
    }

    /// Adds to the record begun earlier; hands it on once whole. Returns what is left.
    private mutating func completePartial(
        from bytes: UnsafeRawBufferPointer,
        record: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws -> UnsafeRawBufferPointer {
        var rest = bytes
        if partial.count < Self.headerLength {
            let take = min(Self.headerLength - partial.count, rest.count)
            partial += rest[..<take]
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            guard partial.count == Self.headerLength else { return rest }
        }
        let length = try partial.withUnsafeBytes { try Self.bodyLength(ofHeader: UnsafeRawBufferPointer(rebasing: $0[..<Self.headerLength])) }
        let take = min(Self.headerLength + length - partial.count, rest.count)
        partial += rest[..<take]
        rest = UnsafeRawBufferPointer(rebasing: rest[take...])
        guard partial.count == Self.headerLength + length else { return rest }
        let whole = partial
        // A fresh empty array: the record's buffer goes back now, not at the next record.
        partial = []
        try whole.withUnsafeBytes { try record(UnsafeRawBufferPointer(rebasing: $0[..<Self.headerLength]),
                                               UnsafeRawBufferPointer(rebasing: $0[Self.headerLength...])) }
        return rest
    }

    /// The body length a header announces, or why no protected record has it.
    static func bodyLength(ofHeader header: UnsafeRawBufferPointer) throws(Failure) -> Int {
        let type = header[0]
        // The legacy version (header[1...2]) is to be ignored (RFC 8446, 5.1).
        let length = Int(header[3]) << 8 | Int(header[4])
        guard type == applicationData else { throw .unexpectedRecordType(type) }
        guard length <= maxBodyLength else { throw .recordTooLong(length) }
        guard length >= minBodyLength else { throw .recordTooShort(length) }
        return length
    }

    /// The header of a protected record carrying `bodyLength` bytes.
    public static func header(bodyLength: Int) -> [UInt8] {
        var header: [UInt8] = []
        appendHeader(bodyLength: bodyLength, to: &header)
        return header
    }

    /// Writes that header at the end of `output` (no array of its own: the sealer's per-record path).
    public static func appendHeader(bodyLength: Int, to output: inout [UInt8]) {
        output.append(applicationData)
        output.append(3)
        output.append(3)
        output.append(UInt8(truncatingIfNeeded: bodyLength >> 8))
        output.append(UInt8(truncatingIfNeeded: bodyLength))
    }
}

/// The content of an opened TLS 1.3 record: the bytes before the real
/// content type, which is the last non-zero byte (zeros after it are padding).
public enum TLSInnerPlaintext {
    /// The real type and the content's length, or nil when the record is
    /// all padding (which a peer must never send).
    public static func split(_ opened: UnsafeRawBufferPointer) -> (type: UInt8, contentLength: Int)? {
        var index = opened.count - 1
        while index >= 0 && opened[index] == 0 { index -= 1 }
        guard index >= 0 else { return nil }
        return (opened[index], index)
    }
}
