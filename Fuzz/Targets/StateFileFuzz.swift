// The state-file loader (JournalFile.load, in NavSyncCore) on
// arbitrary bytes: a user's file may be truncated, hand-edited or damaged.
// Properties:
//   - it never crashes; it refuses or returns rooms;
//   - accepted rooms have valid names, a revision of at least 1 and a
//     non-empty stack of well-formed names;
//   - each room's recent changes (the resume history's seed) are of a
//     known op, one revision apart, and end at the room's loaded state;
//   - the snapshot the daemon would write for those rooms loads back to the
//     same rooms with nothing torn;
//   - a change to any loaded room moves it by exactly one revision, or is
//     refused with `limit` when the room is at the largest one: never a trap.
import NavSyncCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStateFile(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    let bytes = input.rest()
    let loaded: JournalFile.Loaded
    do {
        loaded = try JournalFile.load(bytes)
    } catch {
        require(error.line >= 1 && !error.problem.isEmpty, "a refusal names a line and a problem", bytes.shown)
        return 0
    }
    let rooms = loaded.rooms
    let ops = Set(Verb.mutations.map(\.op))
    for (name, recent) in loaded.recent {
        require(recent.last?.state == rooms[name], "a room's recent changes end at its state", name)
        require(recent.allSatisfy { ops.contains($0.op) }, "recent changes have known ops", name)
        require(zip(recent, recent.dropFirst()).allSatisfy { $1.state.revision == $0.state.revision + 1 },
                "recent changes are one revision apart", name)
    }
    for (name, state) in rooms {
        require(Names.isValid(name), "loaded room names are valid", name)
        require(state.revision >= 1, "a stored room has been changed", "\(name) at \(state.revision)")
        require(!state.stack.isEmpty && state.stack.allSatisfy { Names.isValid($0.screen) },
                "a loaded stack is non-empty and well-formed", name)
    }
    for (name, state) in rooms {
        let other = RouteEntry(screen: state.stack[0].screen == "fuzzed" ? "other" : "fuzzed", data: nil)
        do {
            let changed = try Reducer.apply(.select(other), to: state, catalog: .builtIn, maxDepth: 64)
            require(changed?.revision == state.revision + 1, "a change moves the revision by one", name)
        } catch {
            require(error.code == .limit && state.revision == .max, "only a room at the largest revision is refused",
                    "\(name) at \(state.revision): \(error)")
        }
    }
    let snapshot: [UInt8]
    do {
        snapshot = try JournalFile.snapshot(rooms)
    } catch {
        violated("loaded rooms can be written back", "\(error)")
    }
    guard let reloaded = try? JournalFile.load(snapshot) else {
        violated("the written snapshot loads", snapshot.shown)
    }
    require(!reloaded.droppedTornTail && reloaded.rooms == rooms, "the snapshot round-trips", snapshot.shown)
    return 0
}
