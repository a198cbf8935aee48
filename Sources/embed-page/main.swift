import Foundation

// embed-page PAGE OUTPUT: writes OUTPUT, a Swift file declaring
// `enum WebPage { static let bytes: [UInt8] }` holding PAGE's bytes exactly.
// The page goes in as a raw string literal with enough `#`s that nothing in
// it can end the literal; a string literal compiles in a blink where an
// array of 30,000 integers takes the type checker a long time.

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: embed-page PAGE OUTPUT\n".utf8))
    exit(64)
}
guard let data = FileManager.default.contents(atPath: arguments[1]),
      let text = String(data: data, encoding: .utf8) else {
    FileHandle.standardError.write(Data("embed-page: cannot read \(arguments[1]) as UTF-8\n".utf8))
    exit(1)
}
// A multi-line literal turns CR LF into LF; the page must not hold CRs, or
// the embedded bytes would differ from the file's.
guard !text.contains("\r") else {
    FileHandle.standardError.write(Data("embed-page: \(arguments[1]) holds a CR; save it with LF line ends\n".utf8))
    exit(1)
}
var hashes = "#"
while text.contains("\"\"\"" + hashes) || text.contains("\\" + hashes) { hashes += "#" }
let source = """
    // Generated from Web/index.html by the EmbedWebPage plugin at build time; do not edit.
    enum WebPage {
        static let bytes: [UInt8] = Array(text.utf8)
        static let text = \(hashes)\"\"\"
    \(text)
    \"\"\"\(hashes)
    }

    """
do {
    try Data(source.utf8).write(to: URL(fileURLWithPath: arguments[2]), options: .atomic)
} catch {
    FileHandle.standardError.write(Data("embed-page: cannot write \(arguments[2]): \(error)\n".utf8))
    exit(1)
}
