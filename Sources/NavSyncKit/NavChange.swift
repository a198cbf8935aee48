/// What made a change: the protocol's lowercase verb as `rawValue`, or
/// `state` for a whole snapshot that replaced the object's state (after a
/// reconnect the daemon could not continue, a slow reader's resync).
public enum NavOp: String, Hashable, Sendable, CaseIterable {
    /// `SELECT`: the stack became one screen, with no sheet.
    case select
    /// `PUSH`: a screen on top of the stack.
    case push
    /// `POP`: the top of the stack removed.
    case pop
    /// `ROOT`: the stack cut back to its bottom entry.
    case root
    /// `NEXT`: the top of the stack replaced by its catalog `next`.
    case next
    /// `OPEN`: the whole state replaced (a deep link).
    case open
    /// `PRESENT`: a sheet over everything.
    case present
    /// `DISMISS`: the topmost sheet removed.
    case dismiss
    /// A snapshot, not a single change: some revisions may have been skipped
    /// (or, after a memory-only daemon restarted, gone back).
    case state
}

/// One revision of the room, as `SharedNavigation.changes` reports it.
public struct NavChange<Screen: NavScreen>: Hashable, Sendable {
    /// The room's revision after the change.
    public let revision: UInt64
    /// The verb that made it, or `.state` for a snapshot.
    public let op: NavOp
    /// The navigation stack after the change, bottom first.
    public let stack: [Screen]
    /// The sheets after the change, bottom first.
    public let sheets: [Screen]

    /// Makes a change value; the library makes them, tests and previews may too.
    public init(revision: UInt64, op: NavOp, stack: [Screen], sheets: [Screen]) {
        self.revision = revision
        self.op = op
        self.stack = stack
        self.sheets = sheets
    }
}
