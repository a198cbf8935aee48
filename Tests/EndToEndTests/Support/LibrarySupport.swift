import Foundation
import NavSyncKit
import XCTest

/// Waits on the main actor, without blocking it, until `condition` holds;
/// false (after failing the test) when `seconds` pass first.
@MainActor
@discardableResult
func eventually(_ what: String, seconds: Double = 10, file: StaticString = #filePath, line: UInt = #line,
                _ condition: @MainActor () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !condition() {
        if ContinuousClock.now >= deadline {
            XCTFail("timed out after \(seconds) s waiting for \(what)", file: file, line: line)
            return false
        }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// A route as the daemon writes it, from what a `SharedNavigation<NavEntry>` shows.
@MainActor
func route(of navigation: SharedNavigation<NavEntry>) -> String {
    navigation.stack.map { entry in
        "/" + entry.screen + (entry.data.map { ":" + percentEncoded($0) } ?? "")
    }.joined() + navigation.sheets.map { entry in
        "#" + entry.screen + (entry.data.map { ":" + percentEncoded($0) } ?? "")
    }.joined()
}

/// The protocol's escaping: every byte outside `A-Z a-z 0-9 - . _ ~` as `%XX`.
func percentEncoded(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: "~"):
            out.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            out += String(format: "%%%02X", byte)
        }
    }
    return out
}

/// The process's thread count, from /proc.
func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
}

/// Collects what a `changes` stream yields, on a task of its own.
@MainActor
final class ChangeLog<Screen: NavScreen> {
    private(set) var changes: [NavChange<Screen>] = []
    private(set) var finished = false
    private var reader: Task<Void, Never>?

    init(_ stream: AsyncStream<NavChange<Screen>>) {
        reader = Task { @MainActor [weak self] in
            for await change in stream { self?.changes.append(change) }
            self?.finished = true
        }
    }

    var revisions: [UInt64] { changes.map(\.revision) }
}
