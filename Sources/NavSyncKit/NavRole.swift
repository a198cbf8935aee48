/// What this object's connection may do in its room, from the
/// daemon's `WHOAMI`: `control` changes the room, `view` only follows it
/// (its mutations throw `.server(code: "forbidden", ...)`). Apps show or
/// hide their controls by it.
public enum NavRole: String, Sendable {
    case control
    case view
}
