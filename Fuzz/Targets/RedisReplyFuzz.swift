// The Redis reply parser (hiredis's reader and our copy of its replies,
// RedisReplyReader), fed the same bytes whole, one byte at a time and in
// fuzzed chunks. Properties:
//   - every chunking yields the same replies and the same error, if any;
//   - nothing is read past an error;
//   - every reply, written back as RESP, reads back as itself.
// Built from Sources/RedisClient/RedisReply.swift and RedisReplyReader.swift
// with this file (Fuzz/run.sh, target `redis`); hiredis itself is Debian's
// library, not instrumented: the fuzzer is guided by our side only.
import NavSyncCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRedisReply(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    let seed = UInt64(input.byte()) << 8 | UInt64(input.byte())
    let bytes = input.rest()

    let whole = read([bytes[...]])
    let oneByOne = read(bytes.indices.map { bytes[$0...$0] })
    require(oneByOne == whole, "byte-at-a-time matches whole", "input \(bytes.shown)\n  got \(oneByOne)\n  want \(whole)")

    let chunks = randomChunks(bytes, seed: seed)
    let chunked = read(chunks)
    require(chunked == whole, "random chunking matches whole", "chunks \(chunks.map(\.count)), input \(bytes.shown)")

    for reply in whole.replies {
        let again = read([encode(reply)[...]])
        require(again.replies == [reply] && again.error == nil, "a reply written back reads back as itself",
                "\(reply) -> \(again)")
    }
    return 0
}

private struct Outcome: Equatable {
    var replies: [RedisReply] = []
    var error: String?
}

private func read(_ chunks: [ArraySlice<UInt8>]) -> Outcome {
    let reader = RedisReplyReader()
    var outcome = Outcome()
    for chunk in chunks {
        reader.feed(chunk)
        do {
            while let reply = try reader.next() { outcome.replies.append(reply) }
        } catch {
            outcome.error = error.description
            reader.feed([UInt8(ascii: "+"), UInt8(ascii: "x"), 13, 10])
            require((try? reader.next()) == nil, "nothing is read past an error")
            return outcome
        }
    }
    return outcome
}

/// RESP2 as Redis writes it (the reference for the round trip).
private func encode(_ reply: RedisReply) -> [UInt8] {
    func line(_ text: String) -> [UInt8] { Array(text.utf8) + [13, 10] }
    switch reply {
    case .status(let text): return line("+" + text)
    case .error(let text): return line("-" + text)
    case .integer(let value): return line(":\(value)")
    case .null: return line("$-1")
    case .string(let bytes): return line("$\(bytes.count)") + bytes + [13, 10]
    case .array(let elements): return line("*\(elements.count)") + elements.flatMap(encode)
    }
}
