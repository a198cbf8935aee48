import NavSyncServer
import UVLoop

/// The journal's file, written through libuv's synchronous file calls so a
/// call returns only after the write(2) or fsync(2) did.
final class FileJournalStorage: JournalStorage {
    let name: String
    private var file: SyncFile?

    init(path: String) {
        self.name = path
    }

    struct NotOpen: Error, CustomStringConvertible {
        var description: String { "state file is not open for appending" }
    }

    func readAll() throws -> [UInt8]? { try SyncFile.readAll(path: name) }

    func replace(with bytes: [UInt8]) throws {
        try SyncFile.replaceAtomically(path: name, with: bytes)
        // The old handle now points at the replaced file; appends must go to
        // the new one, or to nowhere (and fail) if it cannot be opened.
        file?.close()
        file = nil
        file = try SyncFile.openForAppend(path: name)
    }

    func append(_ bytes: [UInt8]) throws {
        guard let file else { throw NotOpen() }
        try file.append(bytes)
    }

    func sync() throws {
        guard let file else { throw NotOpen() }
        try file.sync()
    }

    var size: Int { file?.size ?? 0 }
}
