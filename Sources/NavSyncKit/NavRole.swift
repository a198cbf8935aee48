/// (1.2) What a connection may do in a room: `control` steers, `view` only
/// watches (and looks on its own, which is not steering).
public enum NavRole: String, Sendable {
    case control, view
}
