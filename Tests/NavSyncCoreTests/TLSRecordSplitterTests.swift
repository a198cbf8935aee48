import NavSyncCore
import XCTest

final class TLSRecordSplitterTests: XCTestCase {
    /// A protected-looking record: header plus `length` bytes numbered from `seed`.
    private func record(length: Int, seed: UInt8) -> [UInt8] {
        TLSRecordSplitter.header(bodyLength: length) + (0..<length).map { UInt8(truncatingIfNeeded: Int(seed) + $0) }
    }

    /// Feeds `stream` in pieces of `piece` bytes and returns each record as header + body.
    private func split(_ stream: [UInt8], piece: Int, into splitter: inout TLSRecordSplitter) throws -> [[UInt8]] {
        var records: [[UInt8]] = []
        var index = 0
        while index < stream.count {
            let end = min(stream.count, index + piece)
            try Array(stream[index..<end]).withUnsafeBytes { bytes in
                try splitter.feed(bytes) { header, body in records.append(Array(header) + Array(body)) }
            }
            index = end
        }
        return records
    }

    func test_splitter_wholeByteAtATimeAndManyPerChunk_giveTheSameRecords() throws {
        let records = [record(length: 17, seed: 1), record(length: 300, seed: 2), record(length: TLSRecordSplitter.maxBodyLength, seed: 3), record(length: 40, seed: 4)]
        let stream = records.flatMap { $0 }
        for piece in [stream.count, 1, 2, 5, 6, 7, 1000, 4096] {
            var splitter = TLSRecordSplitter()
            XCTAssertEqual(try split(stream, piece: piece, into: &splitter), records, "pieces of \(piece)")
            XCTAssertEqual(splitter.bufferedCount, 0, "nothing kept after the last record, pieces of \(piece)")
        }
    }

    func test_splitter_partialRecord_keptUntilTheRestArrives() throws {
        var splitter = TLSRecordSplitter()
        let whole = record(length: 100, seed: 9)
        XCTAssertEqual(try split(Array(whole.prefix(60)), piece: 60, into: &splitter), [])
        XCTAssertEqual(splitter.bufferedCount, 60)
        XCTAssertEqual(try split(Array(whole.dropFirst(60)) + record(length: 20, seed: 0).prefix(3), piece: 1000, into: &splitter), [whole])
        XCTAssertEqual(splitter.bufferedCount, 3, "the next record's start waits")
    }

    func test_splitter_malformedHeaders_refusedForTheirReason() {
        let table: [(String, [UInt8], TLSRecordSplitter.Failure)] = [
            ("handshake type", [22, 3, 3, 0, 20], .unexpectedRecordType(22)),
            ("alert in the clear", [21, 3, 3, 0, 2], .unexpectedRecordType(21)),
            ("change_cipher_spec after the handshake", [20, 3, 3, 0, 1], .unexpectedRecordType(20)),
            ("type zero", [0, 0, 0, 0, 0], .unexpectedRecordType(0)),
            ("one byte too long", [23, 3, 3, 0x41, 0x01], .recordTooLong(16_641)),
            ("largest length", [23, 3, 3, 0xff, 0xff], .recordTooLong(65_535)),
            ("empty", [23, 3, 3, 0, 0], .recordTooShort(0)),
            ("tag only", [23, 3, 3, 0, 16], .recordTooShort(16)),
        ]
        for (name, header, expected) in table {
            for piece in [1, 5] {
                var splitter = TLSRecordSplitter()
                XCTAssertThrowsError(try split(header + [1, 2, 3], piece: piece, into: &splitter), name) { error in
                    XCTAssertEqual(error as? TLSRecordSplitter.Failure, expected, name)
                }
            }
        }
    }

    func test_splitter_badHeaderAfterGoodRecords_deliversTheGoodOnesFirst() {
        var splitter = TLSRecordSplitter()
        var delivered = 0
        let stream = record(length: 30, seed: 0) + record(length: 30, seed: 1) + [22, 3, 3, 0, 30]
        XCTAssertThrowsError(try stream.withUnsafeBytes { try splitter.feed($0) { _, _ in delivered += 1 } })
        XCTAssertEqual(delivered, 2)
    }

    func test_innerPlaintext_typeIsTheLastNonZeroByte() {
        let table: [([UInt8], (UInt8, Int)?)] = [
            ([104, 105, 23], (23, 2)),
            ([104, 105, 23, 0, 0, 0], (23, 2)),
            ([21], (21, 0)),
            ([0, 0, 22, 0], (22, 2)),
            ([0, 0, 0], nil),
            ([], nil),
        ]
        for (opened, expected) in table {
            let found = opened.withUnsafeBytes { TLSInnerPlaintext.split($0) }
            XCTAssertEqual(found?.type, expected?.0, "\(opened)")
            XCTAssertEqual(found?.contentLength, expected?.1, "\(opened)")
        }
    }
}

final class TLSPostHandshakeReaderTests: XCTestCase {
    private func read(_ records: [[UInt8]]) throws -> [TLSPostHandshakeReader.KeyUpdate?] {
        var reader = TLSPostHandshakeReader()
        return try records.map { record in try record.withUnsafeBytes { bytes throws(TLSPostHandshakeReader.Failure) in try reader.read(record: bytes) } }
    }

    func test_reader_keyUpdate_wholeAndSplitOverRecords() throws {
        XCTAssertEqual(try read([[24, 0, 0, 1, 1]]), [.updateRequested])
        XCTAssertEqual(try read([[24, 0, 0, 1, 0]]), [.updateNotRequested])
        XCTAssertEqual(try read([[24], [0], [0], [1], [0]]), [nil, nil, nil, nil, .updateNotRequested])
        XCTAssertEqual(try read([[24, 0, 0], [1, 1]]), [nil, .updateRequested])
        XCTAssertEqual(TLSPostHandshakeReader.keyUpdateMessage(requested: true), [24, 0, 0, 1, 1])
    }

    func test_reader_malformedTable_eachRefused() {
        let table: [(String, [[UInt8]], TLSPostHandshakeReader.Failure)] = [
            ("NewSessionTicket from a client", [[4, 0, 0, 1, 0]], .unexpectedMessage(4)),
            ("Certificate unasked", [[11]], .unexpectedMessage(11)),
            ("ClientHello again", [[1, 0, 0, 40]], .unexpectedMessage(1)),
            ("KeyUpdate of two bytes", [[24, 0, 0, 2, 0, 0]], .badKeyUpdate),
            ("KeyUpdate of no bytes", [[24, 0, 0, 0]], .badKeyUpdate),
            ("KeyUpdate asking 2", [[24, 0, 0, 1, 2]], .badKeyUpdate),
            ("bytes after a KeyUpdate", [[24, 0, 0, 1, 0, 24]], .keyUpdateNotAtRecordEnd),
            ("two KeyUpdates in a record", [[24, 0, 0, 1, 0, 24, 0, 0, 1, 0]], .keyUpdateNotAtRecordEnd),
        ]
        for (name, records, expected) in table {
            XCTAssertThrowsError(try read(records), name) { error in
                XCTAssertEqual(error as? TLSPostHandshakeReader.Failure, expected, name)
            }
        }
    }

    func test_reader_clientPassesOverTickets_splitAnywhere_thenKeyUpdate() throws {
        let ticket: [UInt8] = [4, 0, 0, 9] + [UInt8](1...9)
        let stream = ticket + ticket + [24, 0, 0, 1, 1]
        for cut in 1..<stream.count {
            var reader = TLSPostHandshakeReader(reader: .client)
            let first = try Array(stream[..<cut]).withUnsafeBytes { bytes throws(TLSPostHandshakeReader.Failure) in try reader.read(record: bytes) }
            let second = try Array(stream[cut...]).withUnsafeBytes { bytes throws(TLSPostHandshakeReader.Failure) in try reader.read(record: bytes) }
            XCTAssertNil(first, "cut at \(cut)")
            XCTAssertEqual(second, .updateRequested, "cut at \(cut)")
            XCTAssertFalse(reader.isMidMessage)
        }
        var server = TLSPostHandshakeReader(reader: .server)
        XCTAssertThrowsError(try ticket.withUnsafeBytes { bytes throws(TLSPostHandshakeReader.Failure) in try server.read(record: bytes) }) { error in
            XCTAssertEqual(error as? TLSPostHandshakeReader.Failure, .unexpectedMessage(4), "a client never sends a ticket")
        }
    }

    func test_reader_messageInterruptedByOtherRecord_isRefused() throws {
        var reader = TLSPostHandshakeReader()
        XCTAssertNoThrow(try reader.otherRecordArrived())
        _ = try [UInt8]([24, 0]).withUnsafeBytes { bytes throws(TLSPostHandshakeReader.Failure) in try reader.read(record: bytes) }
        XCTAssertTrue(reader.isMidMessage)
        XCTAssertThrowsError(try reader.otherRecordArrived()) { error in
            XCTAssertEqual(error as? TLSPostHandshakeReader.Failure, .splitAcrossOtherRecords)
        }
    }
}

final class TLSKeyLogLineTests: XCTestCase {
    private let random = String(repeating: "ab", count: 32)
    private func parse(_ line: String) -> TLSKeyLogLine? {
        Array(line.utf8).withUnsafeBytes { TLSKeyLogLine($0) }
    }

    func test_keyLogLine_trafficSecrets_parsed() {
        let secret = String(repeating: "0f", count: 32)
        XCTAssertEqual(parse("SERVER_TRAFFIC_SECRET_0 \(random) \(secret)"),
                       parse("SERVER_TRAFFIC_SECRET_0 \(random) \(secret.uppercased())"))
        XCTAssertEqual(parse("SERVER_TRAFFIC_SECRET_0 \(random) \(secret)")?.secret, [UInt8](repeating: 15, count: 32))
        XCTAssertEqual(parse("CLIENT_TRAFFIC_SECRET_0 \(random) \(String(repeating: "10", count: 48))")?.label, .clientTraffic)
        XCTAssertEqual(parse("CLIENT_TRAFFIC_SECRET_0 \(random) \(String(repeating: "10", count: 48))")?.secret.count, 48)
    }

    func test_keyLogLine_malformedOrOtherLabels_nil() {
        let secret = String(repeating: "0f", count: 32)
        let table = [
            "CLIENT_HANDSHAKE_TRAFFIC_SECRET \(random) \(secret)",
            "CLIENT_RANDOM \(random) \(String(repeating: "00", count: 48))",
            "SERVER_TRAFFIC_SECRET_0 \(random)",
            "SERVER_TRAFFIC_SECRET_0 \(random) \(secret) extra",
            "SERVER_TRAFFIC_SECRET_0  \(random) \(secret)",
            "SERVER_TRAFFIC_SECRET_0 \(random.dropLast(2)) \(secret)",
            "SERVER_TRAFFIC_SECRET_0 \(random) \(secret.dropLast())",
            "SERVER_TRAFFIC_SECRET_0 \(random) \(secret.dropLast(2))",
            "SERVER_TRAFFIC_SECRET_0 \(random) \(secret.dropLast(2))zz",
            "SERVER_TRAFFIC_SECRET_0 \(random) \(String(repeating: "00", count: 64))",
            "",
        ]
        for line in table { XCTAssertNil(parse(line), line) }
    }
}
