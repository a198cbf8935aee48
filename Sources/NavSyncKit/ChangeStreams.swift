/// The readers of `SharedNavigation.changes`, each with a bounded buffer.
///
/// The policy, for a reader that falls behind: each stream holds at most
/// `bufferLimit` changes not yet read. When a change finds only one free
/// place left, the stream gets a `.state` change carrying the whole state
/// instead, and further changes are skipped (each one trying again with a
/// fresh `.state`) until the reader makes room. So a reader always sees
/// every revision in order, or a `.state` change that says some were
/// skipped and brings it up to date, and a stream nobody reads costs at most
/// `bufferLimit + 1` changes of memory.
struct ChangeStreams<Screen: NavScreen> {
    static var bufferLimit: Int { 256 }

    private struct Reader {
        var continuation: AsyncStream<NavChange<Screen>>.Continuation
        /// Only the place kept for a `.state` is left (or not even that).
        var behind = false
    }

    private var readers: [Int: Reader] = [:]
    private var nextID = 0

    var count: Int { readers.count }

    /// A new stream, registered to receive every later change; `onEnd` runs
    /// (on any thread) when its reader stops listening.
    mutating func add(onEnd: @escaping @Sendable (Int) -> Void) -> AsyncStream<NavChange<Screen>> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: NavChange<Screen>.self, bufferingPolicy: .bufferingOldest(Self.bufferLimit + 1))
        let id = nextID
        nextID += 1
        continuation.onTermination = { _ in onEnd(id) }
        readers[id] = Reader(continuation: continuation)
        return stream
    }

    mutating func remove(_ id: Int) {
        readers[id] = nil
    }

    /// Offers one change to every reader; `snapshot` is the same revision as a `.state` change.
    mutating func yield(_ change: NavChange<Screen>) {
        let snapshot = NavChange(revision: change.revision, op: .state, stack: change.stack, sheets: change.sheets)
        for (id, reader) in readers {
            var reader = reader
            switch reader.continuation.yield(reader.behind ? snapshot : change) {
            case .enqueued(let remaining):
                reader.behind = remaining <= 1
            case .dropped:
                reader.behind = true
            case .terminated:
                readers[id] = nil
                continue
            @unknown default:
                reader.behind = true
            }
            readers[id] = reader
        }
    }

    /// Ends every stream; their readers' loops finish.
    mutating func finishAll() {
        let ending = readers.values
        readers.removeAll()
        for reader in ending { reader.continuation.finish() }
    }
}
