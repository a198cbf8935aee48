import NavSyncClient
import NavSyncCore

/// What the user is doing on top of the shared screen: browsing, picking
/// from the menu, typing data, reading the keys. Keys go in, an intent
/// comes out; no drawing and no IO here.
struct UIState {
    enum Mode: Equatable {
        case browsing
        case menu(MenuPurpose, selected: Int)
        case prompt(Prompt)
        case help
        /// The room's members, over the screen.
        case members
    }

    /// What Enter in the menu does with the highlighted screen.
    enum MenuPurpose: Equatable {
        case select, push
        /// Show it as a sheet over everything.
        case present
    }

    /// Typing the data for a change that needs (or may take) some.
    struct Prompt: Equatable {
        enum Verb: Equatable { case select, push, present, next }
        var verb: Verb
        var screen: String
        var rule: DataRule
        var text = ""
    }

    /// A line shown on the status bar until `until` (loop milliseconds).
    struct Notice: Equatable {
        var text: String
        var isError: Bool
        var until: UInt64
    }

    enum Intent: Equatable {
        case nothing
        case send(ClientRequest)
        case repaintEverything
        case quit
        /// Look at the room's screen on one's own from now on (`AT`).
        case detach
        /// Show the room's state again (`AT -`).
        case follow
    }

    static let noticeMilliseconds: UInt64 = 4000
    /// Data typed in the prompt stops growing here; the daemon's line limit is 4096 bytes.
    static let maxDataCharacters = 1000

    var mode: Mode = .browsing
    var notice: Notice?
    /// The daemon says this connection holds a `view` grant (`WHOAMI`):
    /// no key that would change the room does anything but say so.
    var isViewer = false
    /// Detached from the room: the keys move only what this client
    /// shows (and its `AT`), so a viewer may use them too.
    var isDetached = false

    /// What a viewer is told when it presses a key that would steer.
    static let viewerNotice = "view only: this client follows the room and cannot change it (? for help)"

    mutating func post(_ text: String, isError: Bool, now: UInt64) {
        notice = Notice(text: text, isError: isError, until: now + Self.noticeMilliseconds)
    }

    /// Drops the notice once its time is up; true when something changed.
    mutating func expireNotice(now: UInt64) -> Bool {
        guard let notice, now >= notice.until else { return false }
        self.notice = nil
        return true
    }

    mutating func handle(_ key: Key, catalog: [CatalogEntry], stack: [RouteEntry]?, now: UInt64) -> Intent {
        if key == .control("l") { return .repaintEverything }
        if key == .resize { return .nothing }
        switch mode {
        case .browsing:
            return browse(key, catalog: catalog, stack: stack, now: now)
        case .menu(let purpose, let selected):
            return menu(key, purpose: purpose, selected: selected, catalog: catalog, now: now)
        case .prompt(let prompt):
            return type(key, prompt: prompt, now: now)
        case .help:
            mode = .browsing
            return .nothing
        case .members:
            return membersPanel(key)
        }
    }

    /// The members panel stays open for detach and follow, so the
    /// change shows in it; any other key closes it.
    private mutating func membersPanel(_ key: Key) -> Intent {
        switch key {
        case .character("d"): return .detach
        case .character("f"): return .follow
        default:
            mode = .browsing
            return .nothing
        }
    }

    private mutating func browse(_ key: Key, catalog: [CatalogEntry], stack: [RouteEntry]?, now: UInt64) -> Intent {
        if isViewer && !isDetached && Self.steers(key) {
            post(Self.viewerNotice, isError: false, now: now)
            return .nothing
        }
        switch key {
        case .character("q"):
            return .quit
        case .character("m"), .tab:
            mode = .menu(.select, selected: currentIndex(catalog, stack))
        case .character("p"):
            mode = .menu(.push, selected: currentIndex(catalog, stack))
        case .character("s"):
            mode = .menu(.present, selected: currentIndex(catalog, stack))
        case .character("x"):
            // Sent even when no sheet shows here: the daemon's copy is the one
            // that counts, and its `no-sheet` says so like any other refusal.
            return .send(.dismiss)
        case .character(let c) where ("1"..."9").contains(c):
            let index = Int(String(c))! - 1
            guard index < catalog.count else {
                post(catalog.isEmpty ? "the catalog has not arrived yet" : "there is no screen \(index + 1)",
                     isError: true, now: now)
                return .nothing
            }
            return choose(.select, catalog[index], askForData: false)
        case .character("b"), .backspace:
            return .send(.pop)
        case .character("r"):
            return .send(.root)
        case .character("n"):
            let target = stack?.last.flatMap { top in catalog.first { $0.name == top.screen } }?.next
            if let target, let entry = catalog.first(where: { $0.name == target }), entry.data == .required {
                mode = .prompt(Prompt(verb: .next, screen: target, rule: .required))
                return .nothing
            }
            return .send(.next(data: nil))
        case .character("?"):
            mode = .help
        case .character("w"):
            mode = .members
        case .character("d"):
            return .detach
        case .character("f"):
            return .follow
        default:
            break
        }
        return .nothing
    }

    private mutating func menu(_ key: Key, purpose: MenuPurpose, selected: Int, catalog: [CatalogEntry],
                               now: UInt64) -> Intent {
        let count = catalog.count
        switch key {
        case .up, .character("k"):
            if count > 0 { mode = .menu(purpose, selected: (selected + count - 1) % count) }
        case .down, .character("j"):
            if count > 0 { mode = .menu(purpose, selected: (selected + 1) % count) }
        case .home:
            mode = .menu(purpose, selected: 0)
        case .end:
            mode = .menu(purpose, selected: max(0, count - 1))
        case .enter, .character("d"):
            guard selected < count else { mode = .browsing; return .nothing }
            let entry = catalog[selected]
            if key == .character("d") && entry.data == .none {
                // Asked for data where none is taken: say so rather than send something else than asked.
                post("\(entry.title) takes no data; Enter picks it as it is", isError: false, now: now)
                return .nothing
            }
            return choose(purpose, entry, askForData: key == .character("d"))
        case .character("s"):
            // From any menu: the highlighted screen as a sheet.
            guard selected < count else { mode = .browsing; return .nothing }
            return choose(.present, catalog[selected], askForData: false)
        case .character(let c) where ("1"..."9").contains(c):
            let index = Int(String(c))! - 1
            if index < count { return choose(purpose, catalog[index], askForData: false) }
        case .escape, .character("q"), .character("m"), .tab:
            mode = .browsing
        default:
            break
        }
        return .nothing
    }

    /// Sends the change, or first asks for data when the screen requires it
    /// (or, with `askForData`, when it accepts some).
    private mutating func choose(_ purpose: MenuPurpose, _ entry: CatalogEntry, askForData: Bool) -> Intent {
        let verb: Prompt.Verb
        switch purpose {
        case .select: verb = .select
        case .push: verb = .push
        case .present: verb = .present
        }
        if entry.data == .required || (askForData && entry.data == .optional) {
            mode = .prompt(Prompt(verb: verb, screen: entry.name, rule: entry.data))
            // A hint about another screen ("Green takes no data") would read as this prompt's.
            notice = nil
            return .nothing
        }
        mode = .browsing
        return .send(Self.request(verb, screen: entry.name, data: nil))
    }

    /// The change a prompt (or a menu choice that needs no data) sends.
    private static func request(_ verb: Prompt.Verb, screen: String, data: String?) -> ClientRequest {
        switch verb {
        case .select: return .select(screen: screen, data: data)
        case .push: return .push(screen: screen, data: data)
        case .present: return .present(screen: screen, data: data)
        case .next: return .next(data: data)
        }
    }

    private mutating func type(_ key: Key, prompt: Prompt, now: UInt64) -> Intent {
        var prompt = prompt
        switch key {
        case .escape:
            mode = .browsing
            notice = nil  // a "needs data" reminder is about the prompt just closed
            return .nothing
        case .enter:
            let data = prompt.text.trimmingBlanks()
            if data.isEmpty && prompt.rule == .required {
                post("\(prompt.screen) needs data; type some, or Esc to cancel", isError: true, now: now)
                return .nothing
            }
            mode = .browsing
            notice = nil  // a "needs data" reminder is answered now
            return .send(Self.request(prompt.verb, screen: prompt.screen, data: data.isEmpty ? nil : data))
        case .backspace:
            if !prompt.text.isEmpty { prompt.text.removeLast() }
        case .control("u"):
            prompt.text = ""
        case .character(let c):
            if prompt.text.count < Self.maxDataCharacters { prompt.text.append(c) }
        default:
            break
        }
        mode = .prompt(prompt)
        return .nothing
    }

    /// The keys that change the room (or open the menu that does).
    static func steers(_ key: Key) -> Bool {
        switch key {
        case .character(let c): return "mpsxbrn123456789".contains(c)
        case .tab, .backspace: return true
        default: return false
        }
    }

    /// The menu opens on the presented screen.
    private func currentIndex(_ catalog: [CatalogEntry], _ stack: [RouteEntry]?) -> Int {
        guard let top = stack?.last else { return 0 }
        return catalog.firstIndex { $0.name == top.screen } ?? 0
    }
}

extension String {
    /// Without leading and trailing spaces and tabs, as the daemon trims data.
    func trimmingBlanks() -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else { return "" }
        return String(self[first...last])
    }
}
