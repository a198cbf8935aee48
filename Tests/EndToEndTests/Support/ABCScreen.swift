import NavSyncKit

/// Seed 002's screens over the shipped A → B → C catalog, as a test's own enum.
enum ABCScreen: NavScreen {
    case viewA
    case viewB(someData: String)
    case viewC

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
        if case .viewB(let text) = self { return text }
        return nil
    }
}
