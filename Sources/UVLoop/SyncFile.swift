import CLibUV
import Glibc

/// Synchronous file operations through libuv's uv_fs_* with a nil callback (they run on the calling thread).
/// The daemon's state journal relies on these: a call returns only after the write(2)/fsync(2) did.
///
/// No loop is involved: with a nil callback libuv runs the system call at once
/// and never looks at the loop argument, so nil is passed for it.
/// A `SyncFile` is not thread-safe; use it from one thread.
public final class SyncFile {
    /// The open descriptor, or -1 after `close()`.
    private var fd: Int32
    /// The file's length as far as this object's appends are concerned.
    public private(set) var size: Int

    private init(fd: Int32, size: Int) {
        self.fd = fd
        self.size = size
    }

    deinit {
        close()
    }

    /// Opens (creating with `mode` if missing) `path` for appending: O_WRONLY|O_CREAT|O_APPEND|O_CLOEXEC.
    /// `size` starts at the file's current length.
    public static func openForAppend(path: String, mode: Int32 = 0o600) throws(UVError) -> SyncFile {
        let fd = try FS.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode: mode)
        do throws(UVError) {
            return SyncFile(fd: fd, size: try FS.length(of: fd))
        } catch {
            FS.close(fd)
            throw error
        }
    }

    /// Writes all bytes (looping on short writes). On any error it truncates the file back to its length
    /// before the call and throws, so a failed append leaves no torn record.
    public func append(_ bytes: [UInt8]) throws(UVError) {
        guard fd >= 0 else { throw UVError(UV_EBADF) }
        guard !bytes.isEmpty else { return }
        let before = size
        do throws(UVError) {
            try FS.writeAll(fd, bytes)
            size = before + bytes.count
        } catch {
            // Best effort: if even the truncate fails, the caller still learns of the first error.
            _ = try? FS.truncate(fd, to: before)
            throw error
        }
    }

    /// Flushes the file's data and metadata to disk (fsync).
    public func sync() throws(UVError) {
        guard fd >= 0 else { throw UVError(UV_EBADF) }
        try FS.fsync(fd)
    }

    /// Closes the file. Safe to call more than once; also done on deinit.
    public func close() {
        guard fd >= 0 else { return }
        FS.close(fd)
        fd = -1
    }

    /// Reads the whole file. Returns nil when the file does not exist (ENOENT).
    public static func readAll(path: String) throws(UVError) -> [UInt8]? {
        let fd: Int32
        do throws(UVError) {
            fd = try FS.open(path, O_RDONLY | O_CLOEXEC, mode: 0)
        } catch {
            if error.code == UV_ENOENT.rawValue { return nil }
            throw error
        }
        defer { FS.close(fd) }
        return try FS.readToEnd(fd, expected: try FS.length(of: fd))
    }

    /// Writes path.tmp, fsyncs it, renames over path, fsyncs the directory.
    /// On failure the temporary file is removed and `path` is unchanged.
    ///
    /// Whatever already sits at path.tmp (a file left by a crash, or a
    /// symlink someone planted to make the daemon write through it) is
    /// unlinked first, which removes a link itself and never its target; the
    /// temporary file is then created new, private (0600), refusing to follow
    /// a link or to reuse anything that reappeared in between. So the file
    /// renamed over `path` is always one this call made, and so is its mode.
    public static func replaceAtomically(path: String, with bytes: [UInt8]) throws(UVError) {
        let temporary = path + ".tmp"
        FS.unlink(temporary)
        do throws(UVError) {
            let fd = try FS.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode: 0o600)
            do throws(UVError) {
                try FS.writeAll(fd, bytes)
                try FS.fsync(fd)
            } catch {
                FS.close(fd)
                throw error
            }
            FS.close(fd)
            try FS.rename(temporary, to: path)
        } catch {
            FS.unlink(temporary)
            throw error
        }
        try syncDirectory(containing: path)
    }

    /// mkdir -p with mode 0700 for created components. Existing directories are left as they are.
    /// Throws ENOTDIR if some component exists but is not a directory.
    public static func createDirectories(_ path: String) throws(UVError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            if !prefix.isEmpty, !prefix.hasSuffix("/") { prefix += "/" }
            prefix += component
            if component == "." || component == ".." { continue }
            do throws(UVError) {
                try FS.mkdir(prefix, mode: 0o700)
            } catch {
                guard error.code == UV_EEXIST.rawValue else { throw error }
                guard try FS.isDirectory(prefix) else { throw UVError(UV_ENOTDIR) }
            }
        }
    }

    /// What is at a path that should be a directory.
    public enum DirectoryCheck: Equatable, Sendable {
        case directory
        /// Nothing there (or a component of the path is missing).
        case missing
        /// Something that is not a directory, there or on the way to it.
        case notADirectory
    }

    /// Looks at `path` (a link to a directory counts as one).
    public static func checkDirectory(_ path: String) throws(UVError) -> DirectoryCheck {
        do throws(UVError) {
            return try FS.isDirectory(path) ? .directory : .notADirectory
        } catch {
            if error.code == UV_ENOENT.rawValue { return .missing }
            if error.code == UV_ENOTDIR.rawValue { return .notADirectory }
            throw error
        }
    }

    /// Makes a rename inside the directory of `path` durable.
    private static func syncDirectory(containing path: String) throws(UVError) {
        let directory: String
        if let slash = path.lastIndex(of: "/") {
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            directory = "."
        }
        let fd = try FS.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC, mode: 0)
        defer { FS.close(fd) }
        try FS.fsync(fd)
    }
}

/// Thin synchronous wrappers over uv_fs_*: each runs one request on a
/// temporary `uv_fs_t`, cleans it up and turns a negative result into a throw.
private enum FS {
    private static func run(_ call: (UnsafeMutablePointer<uv_fs_t>) -> Int32) throws(UVError) -> Int {
        try run(call) { $0.pointee.result }
    }

    private static func run<R>(
        _ call: (UnsafeMutablePointer<uv_fs_t>) -> Int32,
        result: (UnsafeMutablePointer<uv_fs_t>) -> R
    ) throws(UVError) -> R {
        let request = allocateHandle(uv_fs_t.self)
        defer {
            uv_fs_req_cleanup(request)
            freeHandleMemory(request)
        }
        let rc = call(request)
        if rc < 0 { throw UVError(code: rc) }
        return result(request)
    }

    static func open(_ path: String, _ flags: Int32, mode: Int32) throws(UVError) -> Int32 {
        Int32(try run { uv_fs_open(nil, $0, path, flags, mode, nil) })
    }

    static func close(_ fd: Int32) {
        _ = try? run { uv_fs_close(nil, $0, fd, nil) }
    }

    static func length(of fd: Int32) throws(UVError) -> Int {
        try run({ uv_fs_fstat(nil, $0, fd, nil) }) { Int($0.pointee.statbuf.st_size) }
    }

    static func isDirectory(_ path: String) throws(UVError) -> Bool {
        try run({ uv_fs_stat(nil, $0, path, nil) }) {
            mode_t($0.pointee.statbuf.st_mode) & S_IFMT == S_IFDIR
        }
    }

    /// Writes every byte at the file position (the end, for O_APPEND), retrying short writes.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(UVError) {
        var offset = 0
        while offset < bytes.count {
            // withUnsafeBytes only rethrows untyped errors, so the result travels out as a Result.
            let written = try bytes.withUnsafeBytes { raw in
                let rest = UnsafeMutableRawPointer(mutating: raw.baseAddress! + offset)
                var buffer = uv_buf_init(rest.assumingMemoryBound(to: CChar.self), UInt32(min(raw.count - offset, 1 << 30)))
                return Result { () throws(UVError) in try run { uv_fs_write(nil, $0, fd, &buffer, 1, -1, nil) } }
            }.get()
            if written == 0 { throw UVError(UV_EIO) }  // no progress: do not spin
            offset += written
        }
    }

    /// Reads until end of file; `expected` only sizes the first allocation.
    static func readToEnd(_ fd: Int32, expected: Int) throws(UVError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(expected, 0) + 1)
        var filled = 0
        while true {
            if filled == bytes.count { bytes.append(contentsOf: repeatElement(0, count: max(bytes.count, 4096))) }
            let count = try bytes.withUnsafeMutableBytes { raw in
                var buffer = uv_buf_init(
                    (raw.baseAddress! + filled).assumingMemoryBound(to: CChar.self),
                    UInt32(min(raw.count - filled, 1 << 30)))
                return Result { () throws(UVError) in try run { uv_fs_read(nil, $0, fd, &buffer, 1, -1, nil) } }
            }.get()
            if count == 0 { break }
            filled += count
        }
        bytes.removeSubrange(filled...)
        return bytes
    }

    static func truncate(_ fd: Int32, to length: Int) throws(UVError) {
        _ = try run { uv_fs_ftruncate(nil, $0, fd, Int64(length), nil) }
    }

    static func fsync(_ fd: Int32) throws(UVError) {
        _ = try run { uv_fs_fsync(nil, $0, fd, nil) }
    }

    static func rename(_ from: String, to: String) throws(UVError) {
        _ = try run { uv_fs_rename(nil, $0, from, to, nil) }
    }

    static func unlink(_ path: String) {
        _ = try? run { uv_fs_unlink(nil, $0, path, nil) }
    }

    static func mkdir(_ path: String, mode: Int32) throws(UVError) {
        _ = try run { uv_fs_mkdir(nil, $0, path, mode, nil) }
    }
}
