import Foundation
import NavSyncKit
import Observation

/// The "view": one line on stdout each time the shared object changes. It
/// observes the object the way SwiftUI would (`withObservationTracking`), so
/// it redraws from `stack` and `connection`, not from a log of events.
@MainActor
final class TerminalView {
    private let navigation: SharedNavigation<ABCScreen>
    private var lastLine = ""

    init(navigation: SharedNavigation<ABCScreen>) {
        self.navigation = navigation
    }

    /// Draws now, then again after every change, until the object stops.
    func follow() {
        withObservationTracking {
            draw()
        } onChange: {
            // Called before the change is applied: draw on the next main-actor turn, with the new values.
            Task { @MainActor [weak self] in self?.follow() }
        }
    }

    private func draw() {
        let line: String
        switch navigation.connection {
        case .connected:
            let body = navigation.stack.last.map(Self.render) ?? "(nothing shown)"
            let path = navigation.stack.map(Self.short).joined(separator: " › ")
            line = "rev \(navigation.revision)  \(body)   [\(path)]"
        case .reconnecting:
            line = "… reconnecting (showing rev \(navigation.revision))"
        case .failed(let reason):
            line = "failed: \(reason)"
        case .idle, .connecting, .stopped:
            return
        }
        guard line != lastLine else { return }
        lastLine = line
        FileHandle.standardOutput.write(Data((line + "\n").utf8))  // unbuffered: one line per change, as it happens
    }

    /// The seed's container view: a switch over the enum, each case its own view.
    static func render(_ screen: ABCScreen) -> String {
        switch screen {
        case .viewA: return "View A — Go to B"
        case .viewB(let someData): return "View B — \"\(someData)\" — Go to C"
        case .viewC: return "View C — Go to A"
        }
    }

    static func short(_ screen: ABCScreen) -> String {
        switch screen {
        case .viewA: return "A"
        case .viewB: return "B"
        case .viewC: return "C"
        }
    }
}
