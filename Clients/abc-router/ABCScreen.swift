import NavSyncKit

/// Seed 002's screens, one case per screen of the shipped A → B → C catalog
/// (Clients/netcat/abc-screens.json); B carries the data A hands on.
enum ABCScreen: NavScreen {
    case viewA
    case viewB(someData: String)
    case viewC

    /// The catalog says B requires data and A and C take none, so any other
    /// combination is not one of these screens: the library then reports the
    /// room as failed rather than show a guess.
    init?(screen: String, data: String?) {
        switch (screen, data) {
        case ("viewA", nil): self = .viewA
        case ("viewB", let text?): self = .viewB(someData: text)
        case ("viewC", nil): self = .viewC
        default: return nil
        }
    }

    var screen: String {
        switch self {
        case .viewA: return "viewA"
        case .viewB: return "viewB"
        case .viewC: return "viewC"
        }
    }

    var data: String? {
        if case .viewB(let someData) = self { return someData }
        return nil
    }
}
