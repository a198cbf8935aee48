import NavSyncClient
import NavSyncCore

/// Everything one frame shows, gathered so that painting reads no live state.
struct Frame {
    var endpoint: Endpoint
    var room: String
    var link: Link
    var snapshot: RoomState?
    var catalog: [CatalogEntry]
    var watchers: Int?
    var ui: UIState
    /// Why the last connection ended, shown while reconnecting.
    var lastLoss: String?
    /// False until the first connection: a failure then is "cannot connect", not "lost".
    var hasConnected: Bool
    /// Whether the last reconnect's `WATCH <rev>` was continued or resynced; nil before any reconnect.
    var lastResume: ResumeOutcome?
    var now: UInt64
    /// Members, and the room's state while this client is detached.
    var presence = PresenceFrame()
    /// The connection's grant from `WHOAMI` (nil before it answers, or from a 1.1 daemon).
    var identity: Identity?
    /// A token was given (`--token-file`): a viewer is told about "this token", else about no token.
    var hasToken = false
}

/// Draws a `Frame`:
///
///     row 0         breadcrumb of the stack          red › green › blue
///     middle        title, message, data, centred on the screen's colour
///     row h-2       keys, the data prompt, or why the link was lost
///     row h-1       status: address, room, revision, watchers, link state
///
/// Sheets are boxes over the middle, the top one in front; the screen
/// beneath then keeps to the top of the middle, above them. The menu or the
/// key list is drawn over everything when open.
struct Painter {
    let terminal: Terminal

    private var arrow: String { terminal.unicode ? " › " : " > " }
    private var ellipsis: String { terminal.unicode ? "…" : "..." }

    /// The smallest terminal the layout fits.
    static let minimumColumns = 24
    static let minimumRows = 6

    func paint(_ frame: Frame) {
        let rows = terminal.rows
        let columns = terminal.columns
        guard rows >= Self.minimumRows, columns >= Self.minimumColumns else {
            terminal.clear(background: terminal.attributes())
            let lines = Self.tooSmallNotice(columns: columns, rows: rows, times: terminal.unicode ? "×" : "x")
            for (row, line) in lines.prefix(max(1, rows)).enumerated() {
                terminal.put(line, row: row, column: 0, terminal.attributes())
            }
            terminal.cursor()
            terminal.show()
            return
        }
        let top = frame.snapshot?.stack.last
        let entry = top.flatMap { top in frame.catalog.first { $0.name == top.screen } }
        let body = entry?.color.map { terminal.attributes(Style.screen($0)) } ?? terminal.attributes()
        terminal.clear(background: body)

        paintBreadcrumb(frame, body: body, columns: columns)
        paintBody(frame, top: top, entry: entry, body: body, rows: rows, columns: columns)
        paintSheets(frame, rows: rows, columns: columns)
        let cursor = paintPromptLine(frame, body: body, row: rows - 2, columns: columns)
        paintStatus(frame, row: rows - 1, columns: columns)
        switch frame.ui.mode {
        case .menu(let purpose, let selected):
            paintMenu(frame.catalog, purpose: purpose, selected: selected, rows: rows, columns: columns)
        case .help:
            paintHelp(rows: rows, columns: columns, lines: Self.helpLines(frame))
        case .members:
            paintMembers(frame.presence, rows: rows, columns: columns)
        default:
            break
        }
        if let cursor { terminal.cursor(row: cursor.row, column: cursor.column) } else { terminal.cursor() }
        terminal.show()
    }

    // MARK: Parts

    private func paintBreadcrumb(_ frame: Frame, body: Int32, columns: Int) {
        guard let stack = frame.snapshot?.stack else { return }
        let names = stack.map(\.screen)
        var text = names.joined(separator: arrow)
        // A deep stack keeps its end, where the user is.
        var dropped = 0
        while TextCells.width(text) > columns - 2, dropped < names.count - 1 {
            dropped += 1
            text = ellipsis + arrow + names[dropped...].joined(separator: arrow)
        }
        terminal.put(" " + TextCells.truncate(text, to: columns - 2, ellipsis: ellipsis), row: 0, column: 0,
                     body | terminal.attributes(bold: true))
    }

    private func paintBody(_ frame: Frame, top: RouteEntry?, entry: CatalogEntry?, body: Int32, rows: Int, columns: Int) {
        var lines: [(String, Int32)]
        if let top {
            lines = describe(top, entry, catalog: frame.catalog, style: body, width: max(10, columns - 8), showingNext: true)
        } else {
            lines = [("navsync", body | terminal.attributes(bold: true)), ("", body),
                     ("waiting for room \(frame.room) on \(frame.endpoint)" + ellipsis, body)]
        }
        var underSheets = !(frame.snapshot?.sheets.isEmpty ?? true)
        if case .stopped(let reason) = frame.link {
            // Stopped for good: what to do matters more than a stale screen.
            lines = [("navsync stopped", body | terminal.attributes(bold: true)), ("", body)]
                + Self.stopAdvice(reason, room: frame.room, identity: frame.identity).map { ($0, body) }
            underSheets = false
        }
        let firstRow = 1
        let lastRow = rows - 3
        let available = lastRow - firstRow + 1
        let shown = lines.prefix(available)
        // Under sheets the screen keeps to the top, where the boxes leave it in view.
        var row = underSheets ? min(firstRow + 1, lastRow) : firstRow + max(0, (available - shown.count) / 2)
        for (text, attributes) in shown where row <= lastRow {
            let cut = TextCells.truncate(text, to: columns - 2, ellipsis: ellipsis)
            terminal.put(cut, row: row, column: max(0, (columns - TextCells.width(cut)) / 2), attributes)
            row += 1
        }
    }

    /// The lines that show one entry: title, (without colour) the colour's
    /// name, message, data in quotes and, for the stack, where `n` leads.
    private func describe(_ route: RouteEntry, _ entry: CatalogEntry?, catalog: [CatalogEntry], style: Int32, width: Int,
                          showingNext: Bool) -> [(String, Int32)] {
        let bold = style | terminal.attributes(bold: true)
        var lines: [(String, Int32)] = [(entry?.title ?? route.screen, bold)]
        if !terminal.hasColors {
            // Without colour the colour is still information: say it.
            lines.append(("[ \(entry?.color?.rawValue ?? "no colour") ]", style))
        }
        lines.append(("", style))
        if let message = Self.message(for: entry) {
            for line in wrap(message, width: width, maxLines: 4) { lines.append((line, style)) }
            lines.append(("", style))
        }
        if let data = route.data {
            let open = terminal.unicode ? "“" : "\""
            let close = terminal.unicode ? "”" : "\""
            for line in wrap(open + data + close, width: width, maxLines: 6) {
                lines.append((line, bold))
            }
        } else if entry?.data == .required {
            lines.append(("(no data)", style))
        }
        if showingNext, let next = entry?.next {
            let nextTitle = catalog.first { $0.name == next }?.title ?? next
            if lines.last?.0 != "" { lines.append(("", style)) }
            lines.append(("n → \(nextTitle)".replacingArrow(unicode: terminal.unicode), style | terminal.attributes(dim: true)))
        }
        while lines.last?.0 == "" { lines.removeLast() }
        return lines
    }

    /// How many sheets below the top one show as the edges of boxes behind it.
    static let sheetsShownBehind = 3

    /// The sheets as bordered boxes in their own colours: the top one
    /// in front and whole, labelled with its place in the pile; up to three
    /// under it peek out above and to the left, each labelled with its title.
    /// On a short terminal the boxes behind go first, then the padding, then
    /// the box's last lines; its title stays.
    private func paintSheets(_ frame: Frame, rows: Int, columns: Int) {
        guard let sheets = frame.snapshot?.sheets, let top = sheets.last else { return }
        if case .stopped = frame.link { return }
        let firstRow = 1
        let available = rows - 3 - firstRow + 1
        guard available >= 3 else { return }
        func entry(_ route: RouteEntry) -> CatalogEntry? { frame.catalog.first { $0.name == route.screen } }
        func style(_ route: RouteEntry) -> Int32 {
            entry(route)?.color.map { terminal.attributes(Style.screen($0)) } ?? terminal.attributes()
        }

        var behind = min(sheets.count - 1, Self.sheetsShownBehind, max(0, (columns - 24) / 2))
        let widest = columns - 2 - 2 * behind
        let front = style(top)
        var lines = describe(top, entry(top), catalog: frame.catalog, style: front, width: max(8, min(60, widest - 4)),
                             showingNext: false)
        let label = sheets.count > 1 ? " sheet \(sheets.count) of \(sheets.count) " : " sheet "
        let textWidth = lines.map { TextCells.width($0.0) }.max() ?? 0
        let width = min(widest, max(textWidth + 6, TextCells.width(label) + 4, min(widest, 32)))
        var padding = 1
        func height() -> Int { lines.count + 2 + 2 * padding }
        if height() + behind > available { behind = max(0, available - height()) }
        if height() > available { padding = 0 }
        if height() > available { lines = Array(lines.prefix(available - 2)) }

        let pileTop = firstRow + max(0, (available - height() - behind) / 2)
        let pileLeft = max(0, (columns - width - 2 * behind) / 2)
        for depth in stride(from: behind, through: 1, by: -1) {
            let sheet = sheets[sheets.count - 1 - depth]
            let shift = behind - depth
            let title = " " + (entry(sheet)?.title ?? sheet.screen) + " "
            box(top: pileTop + shift, left: pileLeft + 2 * shift, height: height(), width: width, style(sheet),
                label: TextCells.truncate(title, to: width - 4, ellipsis: ellipsis))
        }
        let boxTop = pileTop + behind
        let boxLeft = pileLeft + 2 * behind
        box(top: boxTop, left: boxLeft, height: height(), width: width, front, label: label)
        for (index, (text, attributes)) in lines.enumerated() {
            let cut = TextCells.truncate(text, to: width - 4, ellipsis: ellipsis)
            terminal.put(cut, row: boxTop + 1 + padding + index, column: boxLeft + (width - TextCells.width(cut)) / 2,
                         attributes)
        }
    }

    /// A filled, framed rectangle with a label on its top edge.
    private func box(top: Int, left: Int, height: Int, width: Int, _ style: Int32, label: String) {
        for row in top..<(top + height) { terminal.fill(row: row, column: left, width: width, style) }
        terminal.frame(top: top, left: left, height: height, width: width, style)
        terminal.put(label, row: top, column: left + 2, style | terminal.attributes(bold: true))
    }

    /// Returns where the cursor belongs when the prompt is open.
    private func paintPromptLine(_ frame: Frame, body: Int32, row: Int, columns: Int) -> (row: Int, column: Int)? {
        if case .prompt(let prompt) = frame.ui.mode {
            let verb: String
            switch prompt.verb {
            case .select: verb = "select"
            case .push: verb = "push"
            case .present: verb = "present"
            case .next: verb = "next"
            }
            let label = " \(verb) \(prompt.screen), data (\(prompt.rule.rawValue)): "
            let style = terminal.attributes(Style.menu, reverse: !terminal.hasColors)
            terminal.fill(row: row, column: 0, width: columns, style)
            terminal.put(label, row: row, column: 0, style)
            let start = TextCells.width(label)
            let room = max(1, columns - start - 1)
            // Long input scrolls: the end, where the typing happens, stays visible.
            var shown = prompt.text
            while TextCells.width(shown) > room - 1, !shown.isEmpty { shown.removeFirst() }
            terminal.put(shown, row: row, column: start, style)
            return (row, min(columns - 1, start + TextCells.width(shown)))
        }
        let dim = body | terminal.attributes(dim: true)
        switch frame.link {
        case .waiting, .connecting(failures: 1...):
            if let loss = frame.lastLoss {
                let what = frame.hasConnected ? "connection lost" : "cannot connect to \(frame.endpoint)"
                terminal.put(TextCells.truncate(" \(what): \(loss)", to: columns, ellipsis: ellipsis),
                             row: row, column: 0, body)
                return nil
            }
        default:
            break
        }
        let keys = Self.keyLine(Self.keyHints(frame), columns: columns)
        terminal.put(keys, row: row, column: 0, dim)
        return nil
    }

    /// The keys worth a hint on this frame, most useful first. A viewer that
    /// follows the room is offered only what it may do: who, detach, keys, quit.
    static func keyHints(_ frame: Frame) -> [String] {
        if case .stopped = frame.link { return [] }
        let detached = frame.presence.isDetached
        if frame.ui.isViewer && !detached { return ["w who", "d detach"] }
        let count = min(9, frame.catalog.count)
        let digits = count > 1 ? "1-\(count) select" : count == 1 ? "1 select" : nil
        // Detached, following again matters most; under a sheet, closing it does.
        var hints: [String] = detached ? ["f follow"] : []
        if !(frame.snapshot?.sheets.isEmpty ?? true) { hints.append("x dismiss") }
        hints += ["m menu", digits, "p push", "s sheet", "b pop", "n next", "r root", "w who"].compactMap { $0 }
        if !detached { hints.append("d detach") }
        return hints
    }

    /// The hints that fit in `columns`, always ending with `? keys  q quit`:
    /// what does not fit is dropped from the end of the list, never those two.
    static func keyLine(_ hints: [String], columns: Int) -> String {
        let tail = ["? keys", "q quit"]
        var chosen: [String] = []
        for hint in hints {
            let candidate = " " + (chosen + [hint] + tail).joined(separator: "  ")
            if TextCells.width(candidate) > columns { break }
            chosen.append(hint)
        }
        let line = " " + (chosen + tail).joined(separator: "  ")
        return TextCells.width(line) <= columns ? line : TextCells.prefix(line, fitting: max(0, columns))
    }

    private func paintStatus(_ frame: Frame, row: Int, columns: Int) {
        let bar = terminal.attributes(Style.status, reverse: !terminal.hasColors)
        if let notice = frame.ui.notice {
            let style = notice.isError ? terminal.attributes(Style.error, bold: true, reverse: !terminal.hasColors) : bar
            terminal.fill(row: row, column: 0, width: columns, style)
            terminal.put(TextCells.truncate(" " + notice.text, to: columns, ellipsis: ellipsis), row: row, column: 0, style)
            return
        }
        terminal.fill(row: row, column: 0, width: columns, bar)

        // What the line holds, most important first: the revision and the
        // link state always; then the room, the watcher count, how the last
        // reconnect resumed and the address; the link's details (the retry
        // countdown in full) last.
        var right: String
        var compactRight: String
        var rightStyle = bar
        let dot = terminal.unicode ? "● " : "* "
        switch frame.link {
        case .idle, .connecting(failures: 0):
            right = "connecting" + ellipsis
            compactRight = right
        case .connecting:
            right = "reconnecting" + ellipsis + " trying now"
            compactRight = "trying" + ellipsis
            rightStyle = terminal.attributes(Style.warning, bold: true, reverse: !terminal.hasColors)
        case .handshaking:
            right = "syncing" + ellipsis
            compactRight = right
        case .live:
            right = dot + "connected"
            compactRight = right
        case .waiting(let retryAt, _, _):
            let wait = Output.seconds(retryAt > frame.now ? retryAt - frame.now : 0)
            right = "reconnecting" + ellipsis + " retry in " + wait
            compactRight = "retry " + wait
            rightStyle = terminal.attributes(Style.warning, bold: true, reverse: !terminal.hasColors)
        case .stopped(let reason):
            right = "stopped: " + reason
            compactRight = "stopped"
            rightStyle = terminal.attributes(Style.error, bold: true, reverse: !terminal.hasColors)
        }
        let separator = terminal.unicode ? " · " : " | "
        // Detached, the revision is the room's (which moves on), not the one this screen was taken at.
        let revision = (frame.presence.roomWhileDetached ?? frame.snapshot).map { "rev \($0.revision)" }
        // "How many are here" is the members (fleet-wide), not this daemon's watchers; from a
        // 1.1 daemon, the watchers. While not live the count may be stale, so it is unknown.
        let here = frame.presence.count.map { $0 == 1 ? "1 member" : "\($0) members" }
            ?? frame.watchers.map { $0 == 1 ? "1 watcher" : "\($0) watchers" }
        let watchers = frame.link == .live ? here : (frame.presence.count == nil ? "? watchers" : "? members")
        // Detached: say so, and where the room is, before anything else.
        let detached = frame.presence.roomWhileDetached.map {
            "detached (room at \(SpokenRoute.words(stack: $0.stack, sheets: $0.sheets, unicode: terminal.unicode)))"
        }
        let address = "\(frame.endpoint)"
        // A viewer sees why its keys do nothing.
        let room = "room \(frame.room)" + (frame.ui.isViewer ? " (view only)" : "")
        let resume = frame.lastResume.map { $0 == .continued ? "continued" : "resynced" }
        // A signed token: until when it is valid, or that it expired.
        let validity = frame.identity?.expires.map { TokenValidity.words(expires: $0) }
        let layouts: [[String?]] = [
            [detached, address, room, revision, watchers, validity, resume],
            [detached, room, revision, watchers, validity, resume],
            [detached, room, revision, watchers, validity],
            [detached, room, revision, watchers],
            [detached, room, revision],
            [detached, revision],
            [detached],
            [revision],
        ]
        var chosen: (left: String, right: String)?
        search: for parts in layouts {
            let left = " " + parts.compactMap { $0 }.joined(separator: separator)
            for candidate in [right, compactRight] {
                let shown = " " + candidate + " "
                if TextCells.width(left) + 1 + TextCells.width(shown) <= columns {
                    chosen = (left, shown)
                    break search
                }
            }
        }
        let (left, shownRight) = chosen ?? (
            TextCells.truncate(" " + (revision ?? ""), to: max(0, columns / 2), ellipsis: ellipsis),
            " " + TextCells.truncate(compactRight, to: max(1, columns - columns / 2 - 2), ellipsis: ellipsis) + " ")
        terminal.put(left, row: row, column: 0, bar)
        terminal.put(shownRight, row: row, column: max(0, columns - TextCells.width(shownRight)), rightStyle)
    }

    private func paintMenu(_ catalog: [CatalogEntry], purpose: UIState.MenuPurpose, selected: Int, rows: Int, columns: Int) {
        let style = terminal.attributes(Style.menu)
        let heading: String
        switch purpose {
        case .select: heading = " Select a screen "
        case .push: heading = " Push a screen "
        case .present: heading = " Present a sheet "
        }
        let asSheet = purpose == .present ? "" : "  s as sheet"
        let footer = (terminal.unicode ? "↑↓ move" : "j/k move") + "  Enter choose  d with data\(asSheet)  Esc close"
        let titleWidth = catalog.map { TextCells.width($0.title) }.max() ?? 0
        let nameWidth = catalog.map { TextCells.width($0.name) }.max() ?? 0
        let dataWidth = catalog.contains { $0.data != .none } ? 13 : 0
        // marker+number, title, name, data rule, swatch — two spaces apart.
        let itemWidth = 3 + 2 + titleWidth + 2 + nameWidth + 2 + dataWidth + 3
        let width = min(columns - 2, max(TextCells.width(footer) + 4, itemWidth + 4))
        let visible = max(1, min(catalog.count, rows - 7))
        let height = max(visible, 1) + 4
        let top = max(1, (rows - height) / 2)
        let left = max(0, (columns - width) / 2)
        for row in top..<(top + height) { terminal.fill(row: row, column: left, width: width, style) }
        terminal.frame(top: top, left: left, height: height, width: width, style)
        terminal.put(heading, row: top, column: left + 2, style | terminal.attributes(bold: true))
        if catalog.isEmpty {
            terminal.put("the catalog has not arrived yet", row: top + 1, column: left + 2, style)
        }
        let first = min(max(0, selected - visible + 1), max(0, catalog.count - visible))
        for (offset, entry) in catalog.enumerated().dropFirst(first).prefix(visible) {
            let row = top + 1 + (offset - first)
            let number = offset < 9 ? "\(offset + 1)" : " "
            let marker = offset == selected ? (terminal.unicode ? "▸" : ">") : " "
            let data = entry.data == .none ? "" : "data \(entry.data.rawValue)"
            let text = "\(marker)\(number)  " + entry.title.padded(to: titleWidth) + "  "
                + entry.name.padded(to: nameWidth) + "  " + data
            let line = offset == selected ? style | terminal.attributes(bold: true, reverse: true) : style
            terminal.fill(row: row, column: left + 1, width: width - 2, line)
            terminal.put(TextCells.truncate(text, to: width - 6, ellipsis: ellipsis), row: row, column: left + 2, line)
            // A swatch of the screen's colour at the right edge.
            if let color = entry.color, terminal.hasColors {
                terminal.put("  ", row: row, column: left + width - 4, terminal.attributes(Style.screen(color)))
            }
        }
        terminal.put(TextCells.truncate(footer, to: width - 4, ellipsis: ellipsis), row: top + height - 2, column: left + 2,
                     style | terminal.attributes(dim: true))
    }

    /// The key list. A viewer's says why it cannot steer — about its token,
    /// or, without one, about the daemon letting anyone watch — and still
    /// lists what it may do: who is here, detach and browse, follow again.
    static func helpLines(_ frame: Frame) -> [String] {
        let presence = [
            "w           who is here, and what each looks at",
            "d           detach: your keys move only this screen",
            "f           follow the room again",
        ]
        let endings = ["Ctrl-L      repaint", "q           quit"]
        if frame.ui.isViewer {
            let why = frame.hasToken
                ? ["this token holds a view grant: the client follows",
                   "the room as others steer it and cannot change it;",
                   "a control token is needed to steer"]
                : ["you are watching without a token: the client",
                   "follows the room as others steer it; to steer,",
                   "start navsync with --token-file FILE (control)"]
            let browse = ["detached, m 1-9 p b n r s x browse on your own"]
            return why + [""] + presence + browse + endings
        }
        return [
            "m, Tab      menu: pick the screen to show",
            "1-9         select that screen directly",
            "p           push a screen on top (asks for data if needed)",
            "b, Bksp     pop the top screen",
            "n           next screen in the flow",
            "r           back to the root screen",
            "s           present a screen as a sheet over all",
            "x           dismiss the top sheet",
        ] + presence + endings + [
            "",
            "in the menu: arrows or j/k, Enter, d to add data,",
            "             s to show the screen as a sheet",
            "every change shows in every client of the room",
        ]
    }

    private func paintHelp(rows: Int, columns: Int, lines: [String]) {
        let style = terminal.attributes(Style.menu)
        let width = min(columns - 2, (lines.map { TextCells.width($0) }.max() ?? 0) + 6)
        let height = min(rows - 2, lines.count + 4)
        let top = max(1, (rows - height) / 2)
        let left = max(0, (columns - width) / 2)
        for row in top..<(top + height) { terminal.fill(row: row, column: left, width: width, style) }
        terminal.frame(top: top, left: left, height: height, width: width, style)
        terminal.put(" Keys ", row: top, column: left + 2, style | terminal.attributes(bold: true))
        for (i, line) in lines.prefix(height - 4).enumerated() {
            terminal.put(TextCells.truncate(line, to: width - 4, ellipsis: ellipsis), row: top + 2 + i, column: left + 3, style)
        }
    }

    // MARK: Helpers

    /// The notice for a terminal below the minimum, in as many lines as fit
    /// and never wider than the terminal: the most helpful wording that fits.
    static func tooSmallNotice(columns: Int, rows: Int, times: String) -> [String] {
        let needed = "\(minimumColumns)\(times)\(minimumRows)"
        let now = "\(columns)\(times)\(rows)"
        let candidates: [[String]] = [
            ["navsync needs at least \(needed); this terminal is \(now)"],
            ["navsync: terminal too small,", "needs \(needed), is \(now)"],
            ["navsync needs", "at least \(needed)", "(is \(now))"],
            ["needs \(needed)", "is \(now)"],
            ["needs", needed],
            [needed],
        ]
        for lines in candidates where lines.count <= max(1, rows) && lines.allSatisfy({ TextCells.width($0) <= columns }) {
            return lines
        }
        return [TextCells.prefix(needed, fitting: max(0, columns))]
    }

    /// What to tell the user when the client stopped for good. A room
    /// outside the grant names that room and the rooms the grant allows.
    static func stopAdvice(_ reason: String, room: String, identity: Identity?) -> [String] {
        if reason.hasPrefix("ERR \(ErrorCode.authRequired.rawValue)") {
            return ["this daemon needs a token:", "quit (q) and start navsync with --token-file FILE"]
        }
        if reason.hasPrefix("ERR \(ErrorCode.authFailed.rawValue)") {
            return ["the daemon refused the token from --token-file;", "quit (q) and check the file"]
        }
        if reason.hasPrefix("ERR \(ErrorCode.forbidden.rawValue)"), reason.contains("outside") {
            var lines = ["room \(room) is outside this token's grant"]
            let allowed = (identity?.rooms ?? "-").split(separator: ",").map(String.init).filter { $0 != "-" }
            if let first = allowed.first {
                lines.append("it allows: " + allowed.joined(separator: ", "))
                lines.append("quit (q) and start navsync with --room \(first)")
            } else {
                lines.append("quit (q) and ask for a token that includes it")
            }
            return lines
        }
        if reason.hasPrefix("ERR \(ErrorCode.forbidden.rawValue) token") {
            return [reason, "quit (q) and ask for a new token"]
        }
        return [reason, "quit (q) and start navsync again"]
    }

    /// The screen's catalog message, from `MESSAGES`; a daemon that
    /// has none to give (or a 1.0 daemon) shows none.
    static func message(for entry: CatalogEntry?) -> String? {
        guard let message = entry?.message, !message.isEmpty else { return nil }
        return message
    }

    /// Breaks text into lines of at most `width` cells, at spaces where it can.
    private func wrap(_ text: String, width: Int, maxLines: Int) -> [String] {
        var lines: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty && lines.count < maxLines {
            if TextCells.width(String(rest)) <= width {
                lines.append(String(rest))
                return lines
            }
            var cut = TextCells.prefix(String(rest), fitting: width)
            if let space = cut.lastIndex(of: " "), cut.distance(from: cut.startIndex, to: space) > width / 2 {
                cut = String(cut[..<space])
            }
            lines.append(cut)
            rest = Substring(rest.unicodeScalars.dropFirst(cut.unicodeScalars.count)).drop { $0 == " " }
        }
        if !rest.isEmpty, let last = lines.popLast() {
            lines.append(TextCells.truncate(last + ellipsis, to: width, ellipsis: ellipsis))
        }
        return lines
    }
}

extension String {
    func padded(to cells: Int) -> String {
        let width = TextCells.width(self)
        return width >= cells ? self : self + String(repeating: " ", count: cells - width)
    }

    func replacingArrow(unicode: Bool) -> String {
        unicode ? self : split(separator: "→", omittingEmptySubsequences: false).joined(separator: "->")
    }
}
