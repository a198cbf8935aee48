import Glibc

/// Splits a byte stream that arrives in arbitrary chunks into whole lines
/// (without the newline), for the modes that need more of a line than its
/// first two bytes (`LineScanner`). A line split across chunks is gathered
/// in a small buffer; a line inside one chunk is handed over in place.
struct LineCollector {
    private var partial: [UInt8] = []

    mutating func scan(_ bytes: UnsafeRawBufferPointer, _ onLine: (UnsafeRawBufferPointer) -> Void) {
        guard let base = bytes.baseAddress else { return }
        var start = 0
        while start < bytes.count {
            guard let found = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start) else {
                partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...]))
                return
            }
            let end = UnsafeRawPointer(found) - base
            if partial.isEmpty {
                onLine(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            } else {
                partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                partial.withUnsafeBytes { onLine($0) }
                partial.removeAll(keepingCapacity: true)
            }
            start = end + 1
        }
    }
}

/// The navsync server lines the restart and history modes act on, with the
/// revision each carries.
enum ServerReply: Equatable {
    case event(UInt64)
    case state(UInt64)
    case continued(UInt64)
    case ok(UInt64)
    case error
    case other

    init(line: UnsafeRawBufferPointer) {
        let space = line.firstIndex(of: UInt8(ascii: " ")) ?? line.count
        let word = UnsafeRawBufferPointer(rebasing: line[0..<space])
        var revision: UInt64 = 0
        var index = space + 1
        while index < line.count, case let digit = line[index], digit >= 48 && digit <= 57 {
            revision = revision &* 10 &+ UInt64(digit - 48)
            index += 1
        }
        func named(_ name: StaticString) -> Bool {
            word.count == name.utf8CodeUnitCount && memcmp(word.baseAddress!, name.utf8Start, word.count) == 0
        }
        if word.isEmpty { self = .other }
        else if named("EVENT") { self = .event(revision) }
        else if named("STATE") { self = .state(revision) }
        else if named("CONTINUE") { self = .continued(revision) }
        else if named("OK") { self = .ok(revision) }
        else if named("ERR") { self = .error }
        else { self = .other }
    }
}
