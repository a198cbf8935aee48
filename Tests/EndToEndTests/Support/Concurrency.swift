import Foundation
import XCTest

/// A value shared between test threads, guarded by a lock.
final class Locked<Value>: @unchecked Sendable {  // value is only touched under lock
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }
}

/// Runs `body(0)` … `body(count - 1)` on `count` threads of their own, all at
/// once, and waits (bounded) for every one to return. Returns false, after
/// failing the test, if some thread did not finish in time.
@discardableResult
func runOnThreads(_ count: Int, timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line,
                  _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    guard group.wait(timeout: .now() + timeout) == .success else {
        XCTFail("threads did not finish within \(timeout)s", file: file, line: line)
        return false
    }
    return true
}
