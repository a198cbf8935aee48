import CHiredis

/// Reads Redis replies (RESP2) out of a byte stream: the same `redisReader`
/// of hiredis that parses what every `RedisConnection` receives, fed by
/// hand, so the parse and our copy of its replies can be tested whole, a
/// byte at a time and in any chunks, and fuzzed (Fuzz/Targets/RedisReplyFuzz).
///
/// A malformed stream cannot be read past: the first error is reported by
/// every later `next()` (a connection that sees one is dropped).
///
/// Internal: no product code reads replies this way (hiredis does it inside
/// `RedisConnection`); the tests reach it with `@testable import`, and the
/// fuzz target compiles this file into itself (Fuzz/run.sh).
final class RedisReplyReader {
    /// Why the stream cannot be read, in hiredis's words.
    struct Malformed: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    private let reader: UnsafeMutablePointer<redisReader>
    private var failure: Malformed?

    init() {
        guard let reader = redisReaderCreate() else { fatalError("hiredis could not allocate a reader") }
        self.reader = reader
    }

    deinit { redisReaderFree(reader) }

    /// Bytes as they arrived; any split is fine.
    func feed(_ bytes: some Collection<UInt8>) {
        guard failure == nil, !bytes.isEmpty else { return }
        let fed = bytes.withContiguousStorageIfAvailable { buffer in
            buffer.withMemoryRebound(to: CChar.self) { redisReaderFeed(reader, $0.baseAddress, $0.count) }
        } ?? Array(bytes).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { redisReaderFeed(reader, $0.baseAddress, $0.count) }
        }
        if fed != REDIS_OK { failure = currentError() }
    }

    /// The next complete reply, nil while the bytes fed so far hold none.
    func next() throws(Malformed) -> RedisReply? {
        if let failure { throw failure }
        var raw: UnsafeMutableRawPointer?
        guard redisReaderGetReply(reader, &raw) == REDIS_OK else {
            let error = currentError()
            failure = error
            throw error
        }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        return RedisReply(UnsafePointer(raw.assumingMemoryBound(to: redisReply.self)))
    }

    private func currentError() -> Malformed {
        let text = withUnsafeBytes(of: reader.pointee.errstr) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return Malformed(description: text.isEmpty ? "malformed reply" : text)
    }
}
