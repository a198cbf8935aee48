import ChildProcessHarness
import Foundation
import Glibc
import XCTest

/// A real failing fsync: navsyncd runs with Tests/faults/failing_fsync.c
/// preloaded, which makes fsync(2) fail with EIO while a flag file exists.
/// With either `--fsync` policy a change whose fsync fails is refused
/// (`ERR internal`), is not broadcast, is not in the state; every change
/// after it is refused until the disk works again, and then the next one is
/// acknowledged and survives kill -9.
final class FailedFsyncTests: XCTestCase {
    func test_failingFsync_changeRefused_nothingBroadcast_recoversWhenDiskDoes() throws {
        let library = try Self.buildFailingFsyncLibrary()
        defer { try? FileManager.default.removeItem(atPath: library) }
        for policy in ["batch", "always"] {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let statePath = directory.file("state.json")
            let flag = directory.file("disk-is-failing")
            let daemon = try DaemonProcess(arguments: ["--fsync", policy, "--log-level", "warn"], state: statePath,
                                           environment: ["LD_PRELOAD": library, "NAVSYNC_FAIL_FSYNC_WHILE": flag])
            defer { daemon.stop() }
            let watcher = try daemon.connect(), actor = try daemon.connect()
            XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red", policy)
            XCTAssertEqual(try actor.request("SELECT green"), "OK 1", policy)
            XCTAssertEqual(try watcher.readLine(), "EVENT 1 select /green", policy)

            XCTAssertTrue(FileManager.default.createFile(atPath: flag, contents: Data()))
            for attempt in ["PUSH blue", "PUSH blue", "SELECT blue"] {
                let reply = try actor.request(attempt)
                XCTAssertTrue(reply.hasPrefix("ERR internal "), "\(policy): \(attempt) while fsync fails: \(reply)")
            }
            XCTAssertEqual(try actor.request("GET"), "STATE 1 /green", "\(policy): state as before")
            XCTAssertTrue(HostileClientTests.waitFor { daemon.log.contains("fsync") }, "\(policy): the failure is logged:\n\(daemon.log)")

            try FileManager.default.removeItem(atPath: flag)
            XCTAssertEqual(try actor.request("PUSH red"), "OK 2", policy)
            // The next line after EVENT 1: nothing of the refused changes was broadcast.
            XCTAssertEqual(try watcher.readLine(), "EVENT 2 push /green/red", policy)

            XCTAssertEqual(daemon.signal(SIGKILL), 128 + SIGKILL)
            let restarted = try DaemonProcess(arguments: ["--fsync", policy], state: statePath)
            defer { restarted.stop() }
            XCTAssertEqual(try restarted.connect().request("GET"), "STATE 2 /green/red", "\(policy): after kill -9")
        }
    }

    /// Compiles Tests/faults/failing_fsync.c into a shared library with the
    /// machine's C compiler (the Swift toolchain brings clang).
    static func buildFailingFsyncLibrary() throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../faults/failing_fsync.c").standardized.path
        let output = NSTemporaryDirectory() + "navsync-failing-fsync-\(getpid()).so"
        let compilers = ["cc", "clang", "gcc"].compactMap { name in
            (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
                .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        }
        guard let compiler = compilers.first else {
            XCTFail("no C compiler (cc, clang or gcc) on PATH to build \(source)")
            throw CompilerMissing()
        }
        let result = try runProcess(compiler, ["-shared", "-fPIC", "-O2", "-o", output, source, "-ldl"], timeout: 60)
        XCTAssertEqual(result.status, 0, "\(compiler) failed:\n\(result.stderr)")
        return output
    }

    struct CompilerMissing: Error {}
}
