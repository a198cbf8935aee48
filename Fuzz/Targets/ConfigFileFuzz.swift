// The hand-written config files (`--tokens`, `--token-keys`) and their
// shared line loop. Properties:
//   - reading arbitrary bytes never crashes; the loop hands over lines in
//     increasing order, each with fields that are non-empty, hold no blank,
//     tab or line break, and do not start a comment;
//   - a refusal names a line of the file (1 up to the number of lines),
//     and names the same line whichever file reads it when the bytes are
//     not UTF-8 there;
//   - a tokens file or keys file that is taken is taken again, with the
//     same entries, when written back out line by line.
import NavSyncCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfigFile(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    let bytes = input.rest()
    let lineCount = bytes.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
    var last = 0
    var loop: ConfigFileProblem?
    do {
        try ConfigLineReader.read(bytes) { line in
            require(line.number > last && line.number <= lineCount, "lines come in order, inside the file", bytes.shown)
            last = line.number
            require(!line.fields.isEmpty && !line.fields[0].hasPrefix("#"), "no blank or comment line is handed over", bytes.shown)
            for field in line.fields {
                require(!field.isEmpty && !field.contains(where: { $0 == " " || $0 == "\t" || $0 == "\n" }),
                        "fields hold no separator", bytes.shown)
            }
        }
    } catch {
        loop = error
    }
    if let loop { require(loop.line >= 1 && loop.line <= lineCount, "the loop's problem names a line", bytes.shown) }

    switch GrantsFile.parse(bytes) {
    case .success(let entries):
        require(loop == nil, "a file with a bad line is not taken", bytes.shown)
        let written = entries.map { "\($0.grant.role.rawValue) \(rooms($0.grant.rooms)) \($0.token) \($0.grant.name)" }
        require((try? GrantsFile.parse(Array(written.joined(separator: "\n").utf8)).get()) == entries,
                "a tokens file written back is the same", bytes.shown)
    case .failure(let problem):
        require(problem.line >= 1 && problem.line <= lineCount, "a tokens file's problem names a line", bytes.shown)
        if let loop { require(problem.line <= loop.line, "no problem is reported past the first bad line", bytes.shown) }
    }
    for purpose in [TokenKeysFile.Purpose.verifying, .signing] {
        switch TokenKeysFile.parse(bytes, for: purpose) {
        case .success(let keys):
            require(loop == nil, "a file with a bad line is not taken", bytes.shown)
            let written = keys.map(\.fileLine).joined(separator: "\n")
            require((try? TokenKeysFile.parse(Array(written.utf8), for: purpose).get()) == keys,
                    "a keys file written back is the same", bytes.shown)
        case .failure(let problem):
            require(problem.line >= 1 && problem.line <= lineCount, "a keys file's problem names a line", bytes.shown)
            if let loop { require(problem.line <= loop.line, "no problem is reported past the first bad line", bytes.shown) }
        }
    }
    return 0
}

private func rooms(_ rooms: Grant.Rooms) -> String {
    switch rooms {
    case .every: return "*"
    case .only(let names): return names.sorted().joined(separator: ",")
    }
}
