/// The pure step function: a room's state and a mutation in, the new state
/// out. No IO, no clocks; the server is the store that calls it.
public enum Reducer {
    /// The new state, or nil when the mutation would leave the stack exactly
    /// as it is (a no-op keeps the revision and sends no event).
    /// Throws the errors that depend on the state: `at-root`, `no-next`,
    /// `limit` for depth, `bad-args` for `NEXT` data.
    public static func apply(_ mutation: Mutation, to state: RoomState, catalog: Catalog,
                             maxDepth: Int) throws(ProtocolError) -> RoomState? {
        let stack = try newStack(mutation, from: state.stack, catalog: catalog, maxDepth: maxDepth)
        guard stack != state.stack else { return nil }
        return RoomState(stack: stack, revision: state.revision + 1)
    }

    private static func newStack(_ mutation: Mutation, from stack: [RouteEntry], catalog: Catalog,
                                 maxDepth: Int) throws(ProtocolError) -> [RouteEntry] {
        switch mutation {
        case .select(let entry):
            return [entry]
        case .push(let entry):
            guard stack.count < maxDepth else {
                throw ProtocolError(.limit, "stack is at the maximum depth of \(maxDepth)")
            }
            return stack + [entry]
        case .pop:
            guard stack.count > 1 else { throw ProtocolError(.atRoot, "the stack has only its root entry") }
            return Array(stack.dropLast())
        case .root:
            return [stack[0]]
        case .next(let data):
            let top = stack[stack.count - 1]
            guard let screen = catalog[top.screen] else {
                throw ProtocolError(.noNext, "screen \(top.screen) is no longer in the catalog")
            }
            guard let nextName = screen.next, let target = catalog[nextName] else {
                throw ProtocolError(.noNext, "screen \(top.screen) has no next screen")
            }
            let entry = RouteEntry(screen: target.name, data: data)
            if let problem = target.dataProblem(entry.data) { throw ProtocolError(.badArgs, problem) }
            return stack.dropLast() + [entry]
        case .open(let route):
            return route
        }
    }
}
