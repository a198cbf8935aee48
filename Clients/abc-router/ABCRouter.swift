import NavSyncKit

/// Seed 002's router, with the shared object in place of a local property:
/// `currentScreen` is what every client of the room shows, and
/// `navigate(to:)` changes it for all of them.
@MainActor
final class ABCRouter {
    let navigation: SharedNavigation<ABCScreen>

    init(navigation: SharedNavigation<ABCScreen>) {
        self.navigation = navigation
    }

    /// The presented screen: the top of the shared stack.
    var currentScreen: ABCScreen? { navigation.stack.last }

    /// Replaces the presented screen, as the seed's router does (no back-stack).
    func navigate(to screen: ABCScreen) async throws {
        try await navigation.select(screen)
    }

    /// One step round the cycle, the way the seed's views call their `onNext`
    /// closures: A hands data to B, B goes on to C, C back to A. From A the
    /// step is the catalog's `next` with data, which is the same move made
    /// by the daemon's own table.
    func advance(dataFromA: String) async throws {
        switch currentScreen {
        case .viewA, nil:
            try await navigation.next(data: dataFromA)
        case .viewB:
            try await navigate(to: .viewC)
        case .viewC:
            try await navigate(to: .viewA)
        }
    }
}
