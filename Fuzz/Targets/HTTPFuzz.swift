// The protocol sniffer and the HTTP request-head parser on arbitrary bytes.
// Properties:
//   - neither crashes; both give the same answer whole, a byte at a time and
//     in fuzzed chunks;
//   - the sniffer says `http` only for a first line of the request-line
//     form, and never reads more than 8 KiB of a candidate;
//   - while undecided it holds every byte fed and no more than its bound:
//     under 8 KiB, and at most `maxMethodBytes + 1` unless the bytes begin
//     like a request line (capitals, one space, `/`);
//   - a parsed head has a capital-letter method, a visible-ASCII target
//     starting with `/`, lowercase token header names, no control bytes;
//   - failures are 400, 414 or 431, and the parser never holds more than
//     its limits allow between reads.
import NavSyncCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    let seed = UInt64(input.byte()) << 8 | UInt64(input.byte())
    let bytes = input.rest()
    var random = SplitMix64(seed: seed)
    var chunks: [ArraySlice<UInt8>] = []
    var i = 0
    while i < bytes.count {
        let end = min(bytes.count, i + 1 + Int(random.next() % 64))
        chunks.append(bytes[i..<end])
        i = end
    }

    let verdict = sniff([bytes[...]])
    require(sniff(bytes.indices.map { bytes[$0...$0] }) == verdict, "sniff byte at a time = whole", bytes.shown)
    require(sniff(chunks) == verdict, "sniff in chunks = whole", bytes.shown)
    if verdict == .http {
        let line = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)[0]
        require(line.count < ProtocolSniffer.maxRequestLineBytes, "http only within 8 KiB", bytes.shown)
        require(line.first.map { $0 >= 65 && $0 <= 90 } == true, "http starts with a capital", bytes.shown)
        require(line.contains(UInt8(ascii: " ")) && line.contains(UInt8(ascii: "/")), "http has a target", bytes.shown)
    }

    let whole = heads([bytes[...]])
    require(heads(bytes.indices.map { bytes[$0...$0] }) == whole, "heads byte at a time = whole", bytes.shown)
    require(heads(chunks) == whole, "heads in chunks = whole", bytes.shown)
    for outcome in whole {
        switch outcome {
        case .success(let head):
            require(!head.method.isEmpty && head.method.utf8.allSatisfy { $0 >= 65 && $0 <= 90 }, "method is capitals", bytes.shown)
            require(head.target.hasPrefix("/") && head.target.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F },
                    "target is visible ASCII from /", bytes.shown)
            for header in head.headers {
                require(!header.name.isEmpty && header.name == header.name.lowercased(), "names lowercase", bytes.shown)
                require(!header.value.utf8.contains { $0 < 0x20 && $0 != 9 || $0 == 0x7F }, "no control bytes", bytes.shown)
            }
            require(head.minorVersion == 1 ? head.headerCount("host") == 1 : head.headerCount("host") <= 1,
                    "Host rule", bytes.shown)
            require(head.headerCount("content-length") <= 1 && head.contentLength >= 0, "one length", bytes.shown)
        case .failure(let error):
            require([400, 414, 431].contains(error.status), "failure statuses", "\(error) for \(bytes.shown)")
        }
    }
    return 0
}

private func sniff(_ chunks: [ArraySlice<UInt8>]) -> ProtocolSniffer.Verdict {
    var sniffer = ProtocolSniffer()
    var fed: [UInt8] = []
    for chunk in chunks {
        let verdict = sniffer.feed(chunk)
        if verdict != .undecided { return verdict }
        fed.append(contentsOf: chunk)
        requireWithinSniffBound(sniffer, fed)
    }
    return .undecided
}

/// The sniff's memory bound: what an undecided sniffer may hold.
private func requireWithinSniffBound(_ sniffer: ProtocolSniffer, _ fed: [UInt8]) {
    require(sniffer.bufferedByteCount == fed.count, "an undecided sniffer holds what it was fed", fed.shown)
    require(fed.count < ProtocolSniffer.maxRequestLineBytes, "undecided within 8 KiB", fed.shown)
    let method = fed.prefix { $0 >= 65 && $0 <= 90 }
    let beginsLikeRequest = !method.isEmpty && fed.dropFirst(method.count).starts(with: " /".utf8)
    require(beginsLikeRequest || fed.count <= ProtocolSniffer.maxMethodBytes + 1,
            "undecided past the method bound only for a request-line start", fed.shown)
}

/// Every head up to the first failure; bodies are skipped as the daemon does.
private func heads(_ chunks: [ArraySlice<UInt8>]) -> [Result<HTTPRequestHead, HTTPHeadError>] {
    var parser = HTTPHeadParser()
    var results: [Result<HTTPRequestHead, HTTPHeadError>] = []
    var bodyLeft = 0
    for chunk in chunks {
        parser.append(chunk)
        bodyLeft -= parser.skip(upTo: bodyLeft)
        while bodyLeft == 0, let outcome = parser.next() {
            results.append(outcome)
            guard case .success(let head) = outcome else { return results }
            bodyLeft = head.contentLength - parser.skip(upTo: head.contentLength)
        }
        require(parser.bufferedByteCount <= chunk.count + HTTPHeadParser.maxRequestLineBytes + HTTPHeadParser.maxHeaderBytes
                    || bodyLeft > 0, "parser stays bounded")
    }
    return results
}
