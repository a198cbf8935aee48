import Glibc
import UVLoop
import XCTest

final class SyncFileTests: LoopTestCase {
    func test_syncFile_appendTracksSizeAndPersists() throws {
        let path = temporaryPath("journal")
        let file = try SyncFile.openForAppend(path: path)
        XCTAssertEqual(file.size, 0)
        try file.append(Array("one\n".utf8))
        try file.append([])
        try file.append(Array("two\n".utf8))
        try file.sync()
        XCTAssertEqual(file.size, 8)
        file.close()
        file.close()
        XCTAssertThrowsError(try file.append([1]), "append after close")

        let reopened = try SyncFile.openForAppend(path: path)
        XCTAssertEqual(reopened.size, 8, "size starts at the existing length")
        try reopened.append(Array("three\n".utf8))
        reopened.close()
        XCTAssertEqual(try SyncFile.readAll(path: path), Array("one\ntwo\nthree\n".utf8))

        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
    }

    func test_syncFile_failedAppend_truncatesBackAndThrows() throws {
        let path = temporaryPath("limited")
        let file = try SyncFile.openForAppend(path: path)
        defer { file.close() }
        try file.append([UInt8](repeating: 0x41, count: 600))

        // A file size limit makes the next append stop half-way with EFBIG.
        var saved = rlimit()
        XCTAssertEqual(getrlimit(RLIMIT_FSIZE_RESOURCE, &saved), 0)
        let oldHandler = signal(SIGXFSZ, SIG_IGN)
        var limited = saved
        limited.rlim_cur = 1000
        XCTAssertEqual(setrlimit(RLIMIT_FSIZE_RESOURCE, &limited), 0)
        var thrown: UVError?
        do {
            try file.append([UInt8](repeating: 0x42, count: 600))
        } catch {
            thrown = error
        }
        XCTAssertEqual(setrlimit(RLIMIT_FSIZE_RESOURCE, &saved), 0)
        signal(SIGXFSZ, oldHandler)

        XCTAssertEqual(thrown?.name, "EFBIG")
        XCTAssertEqual(file.size, 600)
        XCTAssertEqual(try SyncFile.readAll(path: path), [UInt8](repeating: 0x41, count: 600), "no torn record")

        try file.append(Array("ok".utf8))
        XCTAssertEqual(file.size, 602)
    }

    func test_syncFile_openInMissingDirectory_throws() {
        XCTAssertThrowsError(try SyncFile.openForAppend(path: "/nonexistent-dir-uvloop/file")) {
            XCTAssertEqual(($0 as? UVError)?.name, "ENOENT")
        }
    }

    func test_readAll_missingFile_returnsNil() throws {
        XCTAssertNil(try SyncFile.readAll(path: temporaryPath("missing")))
    }

    func test_readAll_directory_throws() {
        XCTAssertThrowsError(try SyncFile.readAll(path: "/tmp"))
    }

    func test_readAll_largeFile_readsEverything() throws {
        let path = temporaryPath("large")
        let content = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try SyncFile.replaceAtomically(path: path, with: content)
        XCTAssertEqual(try SyncFile.readAll(path: path), content)
    }

    func test_replaceAtomically_replacesContentAndLeavesNoTemporary() throws {
        let path = temporaryPath("snapshot")
        try SyncFile.replaceAtomically(path: path, with: Array("first".utf8))
        try SyncFile.replaceAtomically(path: path, with: Array("second, longer".utf8))
        try SyncFile.replaceAtomically(path: path, with: [])
        XCTAssertEqual(try SyncFile.readAll(path: path), [])
        try SyncFile.replaceAtomically(path: path, with: Array("final".utf8))
        XCTAssertEqual(try SyncFile.readAll(path: path), Array("final".utf8))
        XCTAssertNil(try SyncFile.readAll(path: path + ".tmp"))
    }

    func test_replaceAtomically_symlinkAtTemporary_replacesTheLinkNotItsTarget() throws {
        let path = temporaryPath("linked")
        let victim = temporaryPath("victim")
        try SyncFile.replaceAtomically(path: victim, with: Array("precious".utf8))
        addTeardownBlock { unlink(path + ".tmp") }
        XCTAssertEqual(symlink(victim, path + ".tmp"), 0)
        try SyncFile.replaceAtomically(path: path, with: Array("state".utf8))
        XCTAssertEqual(try SyncFile.readAll(path: victim), Array("precious".utf8))
        XCTAssertEqual(try SyncFile.readAll(path: path), Array("state".utf8))
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFREG, "the link was renamed into place")
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(lstat(victim, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600, "the victim's mode was not touched")
        XCTAssertNil(try SyncFile.readAll(path: path + ".tmp"))
    }

    func test_replaceAtomically_staleTemporary_isNotReused() throws {
        let path = temporaryPath("stale")
        try SyncFile.replaceAtomically(path: path + ".tmp", with: Array("left by a crash, longer".utf8))
        chmod(path + ".tmp", 0o666)
        try SyncFile.replaceAtomically(path: path, with: Array("new".utf8))
        XCTAssertEqual(try SyncFile.readAll(path: path), Array("new".utf8))
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
    }

    func test_replaceAtomically_missingDirectory_throwsAndLeavesNothing() {
        XCTAssertThrowsError(try SyncFile.replaceAtomically(path: "/nonexistent-dir-uvloop/x", with: [1]))
    }

    func test_checkDirectory_tellsDirectoryMissingAndNotADirectoryApart() throws {
        let file = temporaryPath("plain")
        try SyncFile.replaceAtomically(path: file, with: [1])
        XCTAssertEqual(try SyncFile.checkDirectory("/tmp"), .directory)
        XCTAssertEqual(try SyncFile.checkDirectory(temporaryPath("absent")), .missing)
        XCTAssertEqual(try SyncFile.checkDirectory(temporaryPath("absent") + "/deeper"), .missing)
        XCTAssertEqual(try SyncFile.checkDirectory(file), .notADirectory)
        XCTAssertEqual(try SyncFile.checkDirectory(file + "/deeper"), .notADirectory)
    }

    func test_createDirectories_createsPrivateNestedDirectories() throws {
        let root = temporaryPath("tree")
        let leaf = root + "/a/b/c"
        defer {
            for path in [leaf, root + "/a/b", root + "/a", root] { rmdir(path) }
        }
        try SyncFile.createDirectories(leaf)
        try SyncFile.createDirectories(leaf + "/")  // existing: fine
        for path in [root, root + "/a", leaf] {
            var info = stat()
            XCTAssertEqual(stat(path, &info), 0, path)
            XCTAssertEqual(info.st_mode & S_IFMT, S_IFDIR, path)
            XCTAssertEqual(info.st_mode & 0o777, 0o700, path)
        }
        let file = try SyncFile.openForAppend(path: leaf + "/file")
        file.close()
        defer { unlink(leaf + "/file") }
        XCTAssertThrowsError(try SyncFile.createDirectories(leaf + "/file/deeper")) {
            XCTAssertEqual(($0 as? UVError)?.name, "ENOTDIR")
        }
    }
}

/// RLIMIT_FSIZE in the form getrlimit/setrlimit take on glibc.
let RLIMIT_FSIZE_RESOURCE = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
