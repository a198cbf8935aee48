/// An immutable run of bytes that many connections write at once: one
/// room's events of one loop turn. Its storage never moves and never
/// changes while the object lives, so a queued write may keep a strong
/// reference to it and point into it instead of copying its unsent tail.
///
/// The bytes are reference-counted by the object itself; `queuedWriteStarted`
/// and `queuedWriteEnded` count, apart from that, the queued writes that
/// hold it, so that its memory is charged once to its `ledger` however
/// many connections hold it.
///
/// Must be used on the loop thread only (the counts are plain integers).
public final class SharedBytes {
    /// The bytes, allocated once in `init` and freed in `deinit`.
    private let storage: UnsafeMutableRawBufferPointer
    /// Where the memory held by queued writes is charged, once per buffer.
    private let ledger: SharedBytesLedger?
    /// Queued writes holding this buffer now.
    public private(set) var queuedWrites = 0
    /// Other forms of the same content that connections of another kind
    /// share (a WebSocket's frames of these lines, a stream's server-sent
    /// events), each made by the first of them that needs it; keyed by whoever made it.
    private var derivedForms: [(maker: ObjectIdentifier, bytes: SharedBytes)] = []

    public init(_ bytes: some Collection<UInt8>, ledger: SharedBytesLedger? = nil) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
        _ = storage.initializeMemory(as: UInt8.self, from: bytes)
        self.storage = storage
        self.ledger = ledger
    }

    /// The chunks one after another, copied once into the new buffer.
    public init(joining chunks: [[UInt8]], ledger: SharedBytesLedger? = nil) {
        var total = 0
        for chunk in chunks { total += chunk.count }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: total, alignment: 16)
        var filled = 0
        for chunk in chunks {
            chunk.withUnsafeBytes { source in
                UnsafeMutableRawBufferPointer(rebasing: storage[filled..<filled + source.count]).copyMemory(from: source)
            }
            filled += chunk.count
        }
        self.storage = storage
        self.ledger = ledger
    }

    deinit { storage.deallocate() }

    public var count: Int { storage.count }

    /// The bytes. Valid, unchanged, for as long as this object lives: a
    /// holder of a strong reference may keep the pointer.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(storage) }

    public subscript(index: Int) -> UInt8 { storage[index] }

    /// A copy, for the paths that are not shared (a connection's own batch).
    public var array: [UInt8] { Array(bytes) }

    /// The form of these bytes that `maker` turns them into, made once by
    /// `make` and shared by every caller with the same `maker` afterwards.
    /// The made form is charged to the same ledger.
    public func derived(by maker: AnyObject, _ make: (UnsafeRawBufferPointer) -> [UInt8]) -> SharedBytes {
        let key = ObjectIdentifier(maker)
        if let form = derivedForms.first(where: { $0.maker == key }) { return form.bytes }
        let made = SharedBytes(make(bytes), ledger: ledger)
        derivedForms.append((key, made))
        return made
    }

    /// A queued write now holds this buffer (until `queuedWriteEnded`).
    public func queuedWriteStarted() {
        if queuedWrites == 0 { ledger?.heldBytes += count + SharedBytesLedger.blockOverhead }
        queuedWrites += 1
    }

    /// A queued write let go of this buffer.
    public func queuedWriteEnded() {
        queuedWrites -= 1
        if queuedWrites == 0 { ledger?.heldBytes -= count + SharedBytesLedger.blockOverhead }
    }
}

/// The memory of shared buffers that queued writes hold, each counted once
/// however many writes hold it: with the connections' own memory, what
/// `--max-output-memory` bounds.
/// Must be used on the loop thread only.
public final class SharedBytesLedger {
    /// What one shared buffer costs beyond its bytes: the object's header
    /// and malloc's word, rounded.
    public static let blockOverhead = 64

    public internal(set) var heldBytes = 0

    public init() {}
}
