/// One change of a room's state, for `SharedNavigation.ifAt(_:_:)`; each
/// case is the method of the same name.
public enum NavMutation<Screen: NavScreen>: Hashable, Sendable {
    /// The stack becomes just this screen, and no sheet is left.
    case select(Screen)
    /// This screen on top of the stack.
    case push(Screen)
    /// The top of the stack removed.
    case pop
    /// The stack cut back to its bottom entry.
    case root
    /// The top of the stack replaced by its catalog `next`, with this data.
    case next(data: String?)
    /// The whole state replaced: a deep link.
    case open(stack: [Screen], sheets: [Screen])
    /// A sheet put over everything.
    case present(Screen)
    /// The topmost sheet removed.
    case dismiss
}
