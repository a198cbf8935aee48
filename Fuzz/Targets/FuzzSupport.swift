// Shared by every fuzz target (each binary compiles this file with its own
// target file against the NavSyncCore module built for fuzzing).
import Glibc
import NavSyncCore

/// Stops the run with a message libFuzzer keeps next to the crashing input.
/// A broken property is a crash on purpose: libFuzzer then saves the input
/// and minimises it like any other failure.
func violated(_ property: String, _ detail: @autoclosure () -> String = "") -> Never {
    let text = "PROPERTY VIOLATED: \(property)\(detail().isEmpty ? "" : "\n  \(detail())")\n"
    text.utf8CString.withUnsafeBufferPointer { buffer in
        _ = write(2, buffer.baseAddress, buffer.count - 1)
    }
    fatalError(property)
}

func require(_ condition: Bool, _ property: String, _ detail: @autoclosure () -> String = "") {
    if !condition { violated(property, detail()) }
}

/// Reads choices out of the front of the fuzzer's input, so every decision a
/// target makes (limits, chunk sizes, which catalog) is itself fuzzed and a
/// saved crash replays exactly.
struct FuzzInput {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    init(_ data: UnsafePointer<UInt8>?, _ count: Int) {
        bytes = UnsafeBufferPointer(start: count > 0 ? data : nil, count: count)
    }

    var remainingCount: Int { bytes.count - position }

    /// The next byte, or 0 once the input is used up.
    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A value in 0..<bound (bound > 0) from the next two bytes.
    mutating func below(_ bound: Int) -> Int {
        (Int(byte()) << 8 | Int(byte())) % bound
    }

    mutating func rest() -> [UInt8] {
        defer { position = bytes.count }
        return Array(bytes[position...])
    }
}

/// The example catalog the project ships (A → B → C with required data on B),
/// so targets exercise `required` as well as the built-in's `none`/`optional`.
let abcCatalog: Catalog = {
    do {
        return try Catalog(initial: "viewA", screens: [
            Screen(name: "viewA", title: "View A", color: .cyan, next: "viewB", data: .none),
            Screen(name: "viewB", title: "View B", color: .magenta, next: "viewC", data: .required),
            Screen(name: "viewC", title: "View C", color: .yellow, next: "viewA", data: .optional),
            Screen(name: "dead-end", title: "Dead end", color: .white, next: nil, data: .none),
        ])
    } catch {
        violated("the fuzz catalog literal is valid", "\(error)")
    }
}()

extension Array where Element == UInt8 {
    var shown: String {
        let text = String(decoding: self.prefix(200), as: UTF8.self)
        return "\(count) bytes: \(String(reflecting: text))"
    }
}

/// `bytes` cut into chunks chosen by `seed`: mostly short ones, sometimes
/// empty ones, sometimes long ones (for targets fed as a stream arrives).
func randomChunks(_ bytes: [UInt8], seed: UInt64) -> [ArraySlice<UInt8>] {
    var random = SplitMix64(seed: seed)
    var chunks: [ArraySlice<UInt8>] = []
    var at = 0
    while at < bytes.count {
        let length = random.next() % 8 == 0 ? Int(random.next() % 200) : Int(random.next() % 6)
        let end = min(bytes.count, at + length)
        chunks.append(bytes[at..<end])
        at = end
    }
    return chunks
}
