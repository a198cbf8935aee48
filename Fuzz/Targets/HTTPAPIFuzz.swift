// The HTTP API's two readers of outside bytes (1.3). Properties:
//   - a POST body is a change or a refusal, never a crash: a change's line
//     fits --max-line, holds no line break or control character, starts with
//     its op's verb, and the hub's parser reads it (and its IF form) as that
//     mutation or refuses it for the catalog's reasons only; a refusal is 400
//     or 422;
//   - a watcher's output turned into server-sent events is the same whole,
//     byte-wise or in random chunks, and every event is blocks of
//     `field: value` lines ending in a blank line, no value holding a CR.
import NavSyncCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPAPI(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    let maxLine = 8 + input.below(4096)
    let seed = UInt64(input.byte())
    let revision = UInt64(input.byte())
    let bytes = input.rest()
    let parser = CommandParser(catalog: seed & 1 == 0 ? .builtIn : abcCatalog, maxDepth: 1 + Int(seed % 8))

    switch JSONChangeBody.parse(bytes, maxLineBytes: maxLine) {
    case .success(let change):
        let line = Array(change.line.utf8)
        require(line.count <= maxLine, "a change's line fits --max-line", change.line)
        require(!line.contains(where: { $0 < 0x20 || $0 == 0x7F }), "a change's line holds no control byte", change.line)
        require(change.line.hasPrefix(change.verb.rawValue), "the line starts with the op's verb", change.line)
        for ifRevision in [nil, revision] {
            guard let parsed = parser.parse(Array(change.requestLine(ifRevision: ifRevision).utf8)) else {
                violated("the hub reads a change's line", change.line)
            }
            switch parsed {
            case .success(.mutate(let mutation, let guarded)):
                require(mutation.verb == change.verb && guarded == ifRevision, "the line is the body's change", change.line)
            case .success(let other):
                violated("a change's line is a change", "\(change.line) -> \(other)")
            case .failure(let error):
                require([.unknownScreen, .badArgs, .badRoute, .limit].contains(error.code),
                        "the hub refuses a change's line for the catalog's reasons only", "\(change.line) -> \(error)")
            }
        }
    case .failure(let refusal):
        require(refusal.status == 400 || refusal.status == 422, "a refusal is 400 or 422", "\(refusal)")
    }

    // The same bytes as a watcher's output.
    var whole = ServerSentEvents.Translator(room: "r")
    let events = whole.events(from: bytes) + whole.events(from: [UInt8(ascii: "\n")])
    var random = SplitMix64(seed: seed)
    var chunked = ServerSentEvents.Translator(room: "r")
    var pieces: [UInt8] = []
    var i = 0
    while i < bytes.count {
        let end = min(bytes.count, i + 1 + Int(random.next() % 16))
        pieces += chunked.events(from: bytes[i..<end])
        i = end
    }
    pieces += chunked.events(from: [UInt8(ascii: "\n")])
    require(pieces == events, "events are the same whole and in chunks", bytes.shown)
    require(!events.contains(UInt8(ascii: "\r")), "no event holds a CR", bytes.shown)
    let text = String(decoding: events, as: UTF8.self)
    require(events.isEmpty || text.hasSuffix("\n\n"), "events end in a blank line", bytes.shown)
    for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
        require(line.hasPrefix("id: ") || line.hasPrefix("event: ") || line.hasPrefix("data: "),
                "every line of an event is a field", String(line))
    }
    return 0
}
