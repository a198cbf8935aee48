/// The file operations the journal needs. The daemon implements them with
/// libuv's synchronous file calls; tests implement them in memory and can
/// make any of them fail.
public protocol JournalStorage: AnyObject {
    /// The whole file, or nil when it does not exist.
    func readAll() throws -> [UInt8]?
    /// Replaces the file atomically (temp file, fsync, rename) and reopens it for appending.
    func replace(with bytes: [UInt8]) throws
    /// Appends every byte or nothing: a failed append leaves the file as it was.
    func append(_ bytes: [UInt8]) throws
    /// fsync(2) of the file.
    func sync() throws
    /// Current length in bytes.
    var size: Int { get }
    /// For messages: the path.
    var name: String { get }
}
