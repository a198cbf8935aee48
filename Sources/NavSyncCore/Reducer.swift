/// The pure step function: a room's state and a mutation in, the new state
/// out. No IO, no clocks; the server is the store that calls it.
///
/// PUSH, POP, ROOT and NEXT change the stack and leave sheets as they
/// are; PRESENT and DISMISS change sheets only; SELECT and OPEN replace both
/// (SELECT leaves no sheet).
public enum Reducer {
    /// The new state, or nil when the mutation would leave stack and sheets
    /// exactly as they are (a no-op keeps the revision and sends no event).
    /// Throws the errors that depend on the state: `at-root`, `no-next`,
    /// `no-sheet`, `limit` for depth or a revision at its maximum, `bad-args`
    /// for `NEXT` data.
    public static func apply(_ mutation: Mutation, to state: RoomState, catalog: Catalog,
                             maxDepth: Int) throws(ProtocolError) -> RoomState? {
        let before = state.navigation
        let after = try navigation(after: mutation, from: before, catalog: catalog, maxDepth: maxDepth)
        guard after != before else { return nil }
        // A revision comes from disk or Redis and may already be the largest
        // there is; the room then cannot take another change, but it still
        // reads as it is (and a no-op above still answers with it).
        let (next, overflowed) = state.revision.addingReportingOverflow(1)
        guard !overflowed else {
            throw ProtocolError(.limit, "the room's revision is at its maximum (\(state.revision)); it cannot change any more")
        }
        return RoomState(after, revision: next)
    }

    private static func navigation(after mutation: Mutation, from current: Navigation, catalog: Catalog,
                                   maxDepth: Int) throws(ProtocolError) -> Navigation {
        var next = current
        switch mutation {
        case .select(let entry):
            next = Navigation(stack: [entry])
        case .push(let entry):
            try roomForOneMore(current, maxDepth)
            next.stack.append(entry)
        case .pop:
            guard current.stack.count > 1 else { throw ProtocolError(.atRoot, "the stack has only its root entry") }
            next.stack.removeLast()
        case .root:
            next.stack = [current.stack[0]]
        case .next(let data):
            let top = current.stack[current.stack.count - 1]
            guard let screen = catalog[top.screen] else {
                throw ProtocolError(.noNext, "screen \(top.screen) is no longer in the catalog")
            }
            guard let nextName = screen.next, let target = catalog[nextName] else {
                throw ProtocolError(.noNext, "screen \(top.screen) has no next screen")
            }
            let entry = RouteEntry(screen: target.name, data: data)
            if let problem = target.dataProblem(entry.data) { throw ProtocolError(.badArgs, problem) }
            next.stack[next.stack.count - 1] = entry
        case .open(let route):
            next = route
        case .present(let entry):
            try roomForOneMore(current, maxDepth)
            next.sheets.append(entry)
        case .dismiss:
            guard !current.sheets.isEmpty else { throw ProtocolError(.noSheet, "no sheet is presented") }
            next.sheets.removeLast()
        }
        return next
    }

    private static func roomForOneMore(_ navigation: Navigation, _ maxDepth: Int) throws(ProtocolError) {
        guard navigation.depth < maxDepth else {
            throw ProtocolError(.limit, "stack and sheets are at the maximum depth of \(maxDepth)")
        }
    }
}
