// navsync-bench's HTTP response reader (Sources/navsync-bench/HTTPResponseReader.swift),
// which decides what the HTTP writers count as an acknowledged change. The
// fuzzed bytes are read whole, one byte at a time and in fuzzed chunks.
// Properties:
//   - every chunking reports the same statuses and the same error, if any;
//   - a status is only ever one of 100...599;
//   - the bytes of whole responses (head + Content-Length body) put in
//     front of the input are reported, in order, before anything else.
// Built from that file with this one (Fuzz/run.sh, target `httpresponse`).
import NavSyncCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPResponse(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    let seed = UInt64(input.byte()) << 8 | UInt64(input.byte())
    let leading = Int(input.byte() % 4)
    let bytes = input.rest()

    let whole = read([bytes[...]])
    for status in whole.statuses { require((100...599).contains(status), "a status is 100...599", "\(status)") }
    let oneByOne = read(bytes.indices.map { bytes[$0...$0] })
    require(oneByOne == whole, "byte-at-a-time matches whole", "input \(bytes.shown)\n  got \(oneByOne)\n  want \(whole)")
    let chunks = randomChunks(bytes, seed: seed)
    require(read(chunks) == whole, "random chunking matches whole", "chunks \(chunks.map(\.count)), input \(bytes.shown)")

    // Known good responses first: their statuses come out first, whatever follows.
    var prefix: [UInt8] = []
    var expected: [Int] = []
    for index in 0..<leading {
        let status = [200, 412, 422, 503][index]
        let body = String(repeating: "x", count: Int(seed >> UInt64(index * 2)) % 50)
        prefix += Array("HTTP/1.1 \(status) X\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
        expected.append(status)
    }
    let joined = read([(prefix + bytes)[...]])
    require(Array(joined.statuses.prefix(leading)) == expected, "whole responses in front are reported first",
            "got \(joined.statuses), want \(expected) first")
    return 0
}

private struct Outcome: Equatable, CustomStringConvertible {
    var statuses: [Int] = []
    var error: String?
    var description: String { "\(statuses) \(error ?? "")" }
}

private func read(_ chunks: [ArraySlice<UInt8>]) -> Outcome {
    var reader = HTTPResponseReader()
    var outcome = Outcome()
    for chunk in chunks {
        do {
            try chunk.withUnsafeBytes { try reader.read($0) { outcome.statuses.append($0) } }
        } catch {
            outcome.error = String(describing: error)
            return outcome
        }
    }
    return outcome
}
