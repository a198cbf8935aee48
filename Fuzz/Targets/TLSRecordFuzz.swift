// A TLS 1.3 connection's own record layer (after the handshake), either end:
// the record splitter, the sealed content type, the post-handshake
// messages and the AEAD of OpenSSL around them. Properties:
//   - nothing crashes, whatever bytes come, in whatever pieces;
//   - the splitter cuts the same records from the stream whole and in
//     fuzzed pieces, keeps at most one record, and every record it hands
//     on is of a length a protected record can have;
//   - records sealed by one side open on the other to exactly the
//     plaintext sent, in fuzzed pieces; one flipped byte fails the
//     connection, and nothing after the flip is ever handed up;
//   - a key log line parses only to a 32- or 48-byte secret.
// Built from Sources/NavSyncTLS/TLS13RecordCipher.swift and
// TLS13Records.swift with this file (Fuzz/run.sh, target `tlsrecord`).
import NavSyncCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTLSRecord(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    let piece = 1 + input.below(600)
    let suiteID = UInt16(0x1301 + Int(input.byte() % 3))
    let flipAt = input.below(5000)
    let reader: TLSPostHandshakeReader.Reader = input.byte() & 1 == 0 ? .server : .client
    let payload = input.rest()

    splitAlone(payload, piece: piece)
    if let line = payload.withUnsafeBytes({ TLSKeyLogLine($0) }) {
        require(line.secret.count == 32 || line.secret.count == 48, "a key log secret is 32 or 48 bytes", payload.shown)
    }
    guard let suite = TLS13Suite(id: suiteID) else { violated("the three suites are known") }
    let clientSecret = [UInt8](repeating: 7, count: suite.hashLength)
    let serverSecret = [UInt8](repeating: 9, count: suite.hashLength)
    guard let server = TLS13Records(suite: suite, clientSecret: clientSecret, serverSecret: serverSecret, end: reader),
          let client = TLS13Records(suite: suite, clientSecret: serverSecret, serverSecret: clientSecret) else {
        violated("records are keyed")
    }

    // The fuzzer's bytes as if from a peer: refused or taken, never a crash.
    var ignored: [UInt8] = [], answers: [UInt8] = []
    _ = feed(server, payload, piece: piece, plaintext: &ignored, output: &answers)

    // Sealed by one side, opened by the other.
    guard let fresh = TLS13Records(suite: suite, clientSecret: clientSecret, serverSecret: serverSecret) else { violated("records are keyed") }
    var records: [UInt8] = []
    require(payload.withUnsafeBytes { client.send($0, into: &records) }, "sealing works")
    var opened: [UInt8] = []
    let outcome = feed(fresh, records, piece: piece, plaintext: &opened, output: &answers)
    require(outcome == .open && opened == payload, "what one side seals the other opens", payload.shown)

    // One flipped byte: the connection fails and hands up nothing from that record on.
    guard !records.isEmpty, let again = TLS13Records(suite: suite, clientSecret: clientSecret, serverSecret: serverSecret) else { return 0 }
    var tampered = records
    let index = flipAt % tampered.count
    tampered[index] ^= 0x40
    var got: [UInt8] = []
    let end = feed(again, tampered, piece: piece, plaintext: &got, output: &answers)
    let (recordStart, headerOffset) = recordStart(containing: index, in: records)
    // A flip in a length that stays legal leaves a record still waiting for its end.
    if case .failed = end {} else {
        require(headerOffset == 3 || headerOffset == 4, "a flipped byte fails the connection", "at \(index) of \(tampered.count)")
    }
    require(got.count <= recordStart, "nothing from the flipped record on is handed up", "\(got.count) > \(recordStart)")
    return 0
}

private func feed(_ records: TLS13Records, _ bytes: [UInt8], piece: Int, plaintext: inout [UInt8], output: inout [UInt8]) -> TLS13Records.Outcome {
    var index = 0
    var outcome = TLS13Records.Outcome.open
    while index < bytes.count, outcome == .open {
        let end = min(bytes.count, index + piece)
        outcome = bytes[index..<end].withUnsafeBytes { records.receive($0, plaintext: &plaintext, output: &output) }
        index = end
    }
    return outcome
}

/// Plaintext bytes carried by the records before the one holding byte
/// `index` (each carries its body less the type byte and the tag), and
/// where in that record the byte is.
private func recordStart(containing index: Int, in records: [UInt8]) -> (carried: Int, offsetInRecord: Int) {
    var offset = 0, carried = 0
    while offset + 5 <= records.count {
        let length = Int(records[offset + 3]) << 8 | Int(records[offset + 4])
        if index < offset + 5 + length { return (carried, index - offset) }
        carried += length - 17
        offset += 5 + length
    }
    return (carried, -1)
}

private func splitAlone(_ payload: [UInt8], piece: Int) {
    var whole = TLSRecordSplitter(), pieces = TLSRecordSplitter()
    var wholeRecords: [[UInt8]] = [], pieceRecords: [[UInt8]] = []
    var wholeError: TLSRecordSplitter.Failure?, pieceError: TLSRecordSplitter.Failure?
    do {
        try payload.withUnsafeBytes { try whole.feed($0) { header, body in wholeRecords.append(Array(header) + Array(body)) } }
    } catch { wholeError = error as? TLSRecordSplitter.Failure }
    var index = 0
    do {
        while index < payload.count {
            let end = min(payload.count, index + piece)
            try payload[index..<end].withUnsafeBytes { try pieces.feed($0) { header, body in pieceRecords.append(Array(header) + Array(body)) } }
            require(pieces.bufferedCount < TLSRecordSplitter.headerLength + TLSRecordSplitter.maxBodyLength, "at most one record kept")
            index = end
        }
    } catch { pieceError = error as? TLSRecordSplitter.Failure }
    require(wholeRecords == pieceRecords && wholeError == pieceError, "whole and in pieces cut the same records", payload.shown)
    for record in wholeRecords {
        require(record.count - 5 >= TLSRecordSplitter.minBodyLength && record.count - 5 <= TLSRecordSplitter.maxBodyLength,
                "a record handed on has a protected record's length")
        var reader = TLSPostHandshakeReader()
        _ = try? record.dropFirst(5).withUnsafeBytes { bytes throws(TLSPostHandshakeReader.Failure) in try reader.read(record: bytes) }
    }
}
