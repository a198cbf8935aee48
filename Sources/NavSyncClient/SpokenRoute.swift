import NavSyncCore

/// A route as people read it: screens joined like the breadcrumb,
/// data decoded after a colon, sheets after a plus — `red › blue: Quarterly
/// numbers`, never `/red/blue:Quarterly%20numbers`. A route that does not
/// decode is shown as it came, rather than hidden.
public enum SpokenRoute {
    public static func words(_ route: String, unicode: Bool = true) -> String {
        guard case .success(let navigation) = Route.decode(route) else { return route }
        return words(stack: navigation.stack, sheets: navigation.sheets, unicode: unicode)
    }

    public static func words(stack: [RouteEntry], sheets: [RouteEntry], unicode: Bool = true) -> String {
        let arrow = unicode ? " › " : " > "
        func entry(_ item: RouteEntry) -> String { item.data.map { "\(item.screen): \($0)" } ?? item.screen }
        var text = stack.map(entry).joined(separator: arrow)
        for sheet in sheets { text += " + " + entry(sheet) }
        return text
    }
}
