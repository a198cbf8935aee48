@preconcurrency import CNCurses
import Glibc
import NavSyncCore

/// A key press, as the UI cares about it.
enum Key: Equatable {
    case character(Character)
    case up, down, left, right, home, end
    case enter, backspace, escape, tab
    /// Ctrl with a letter, as the letter ("l" for Ctrl-L).
    case control(Character)
    case resize
    case other(Int32)
}

/// Named colour pairs. Pairs 1–8 paint a screen in its catalog colour.
enum Style {
    static let status: Int16 = 9
    static let menu: Int16 = 10
    static let error: Int16 = 11
    static let warning: Int16 = 12

    static func screen(_ color: ScreenColor) -> Int16 {
        Int16(ScreenColor.allCases.firstIndex(of: color)! + 1)
    }
}

/// The terminal under ncurses: set up, drawn on, read from, and put back
/// exactly as it was. Owns the ncurses `SCREEN` and the input descriptor.
///
/// Keys are read from a second open of the terminal device rather than from
/// fd 0 itself, so the non-blocking flag that `uv_poll` sets lands on a file
/// description nobody else shares; the shell's stdin flags are saved anyway
/// and put back by `end()`.
/// Single-threaded, like the loop that drives it.
final class Terminal {
    /// The descriptor keys arrive on; poll it for readability.
    let inputFD: Int32
    /// Colour pairs are set up (a colour terminal and no `NO_COLOR`).
    let hasColors: Bool
    /// The locale is UTF-8, so `›`, `…` and `●` can be drawn.
    let unicode: Bool

    private let screen: OpaquePointer
    private let window: UnsafeMutablePointer<WINDOW>
    private let inputFile: UnsafeMutablePointer<FILE>
    private let outputFile: UnsafeMutablePointer<FILE>
    private let savedStdinFlags: Int32
    private var ended = false

    struct SetupError: Error, CustomStringConvertible {
        var description: String
    }

    init(environment: [String: String]) throws(SetupError) {
        setlocale(LC_ALL, "")
        unicode = navsync_locale_is_utf8() != 0
        savedStdinFlags = fcntl(0, F_GETFL)

        var fd: Int32 = -1
        if let name = ttyname(0) { fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY) }
        if fd < 0 { fd = dup(0) }
        guard fd >= 0, let input = fdopen(fd, "r") else {
            throw SetupError(description: "cannot open the terminal for reading")
        }
        let outFD = dup(1)
        guard outFD >= 0, let output = fdopen(outFD, "w") else {
            fclose(input)
            throw SetupError(description: "cannot open the terminal for writing")
        }
        guard let screen = newterm(nil, output, input) else {
            fclose(input)
            fclose(output)
            let name = environment["TERM"] ?? "(unset)"
            throw SetupError(description: "cannot drive a terminal of type TERM=\(name)")
        }
        set_term(screen)
        self.screen = screen
        self.window = navsync_stdscr()
        self.inputFile = input
        self.outputFile = output
        self.inputFD = fd

        cbreak()
        noecho()
        keypad(window, true)
        nodelay(window, true)
        curs_set(0)
        set_escdelay(25)

        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        if !noColor && has_colors() {
            start_color()
            use_default_colors()
            hasColors = true
            for color in ScreenColor.allCases {
                let light: Set<ScreenColor> = [.green, .yellow, .cyan, .white]
                let text = light.contains(color) ? Int16(COLOR_BLACK) : Int16(COLOR_WHITE)
                init_pair(Style.screen(color), text, Self.cursesColor(color))
            }
            init_pair(Style.status, Int16(COLOR_BLACK), Int16(COLOR_WHITE))
            init_pair(Style.menu, Int16(COLOR_BLACK), Int16(COLOR_WHITE))
            init_pair(Style.error, Int16(COLOR_WHITE), Int16(COLOR_RED))
            init_pair(Style.warning, Int16(COLOR_BLACK), Int16(COLOR_YELLOW))
        } else {
            hasColors = false
        }
    }

    deinit { end() }

    private static func cursesColor(_ color: ScreenColor) -> Int16 {
        switch color {
        case .black: return Int16(COLOR_BLACK)
        case .red: return Int16(COLOR_RED)
        case .green: return Int16(COLOR_GREEN)
        case .yellow: return Int16(COLOR_YELLOW)
        case .blue: return Int16(COLOR_BLUE)
        case .magenta: return Int16(COLOR_MAGENTA)
        case .cyan: return Int16(COLOR_CYAN)
        case .white: return Int16(COLOR_WHITE)
        }
    }

    /// Leaves curses mode: cursor, echo, line mode and the screen as they
    /// were, and stdin's file status flags restored. Safe to call twice.
    func end() {
        guard !ended else { return }
        ended = true
        curs_set(1)
        endwin()
        delscreen(screen)
        fclose(inputFile)
        fclose(outputFile)
        if savedStdinFlags >= 0 { _ = fcntl(0, F_SETFL, savedStdinFlags) }
    }

    // MARK: Size

    var rows: Int { Int(getmaxy(window)) }
    var columns: Int { Int(getmaxx(window)) }

    /// Adopts the size the kernel reports for the terminal (after SIGWINCH).
    func adoptKernelSize() {
        var rows: Int32 = 0
        var columns: Int32 = 0
        if navsync_terminal_size(1, &rows, &columns) == 0 || navsync_terminal_size(inputFD, &rows, &columns) == 0 {
            resizeterm(rows, columns)
        }
    }

    // MARK: Input

    /// Every key that is waiting; never blocks.
    func readKeys() -> [Key] {
        var keys: [Key] = []
        while true {
            var code: wint_t = 0
            let kind = wget_wch(window, &code)
            if kind == ERR { break }
            keys.append(kind == KEY_CODE_YES ? Self.specialKey(Int32(code)) : Self.characterKey(code))
        }
        return keys
    }

    private static func specialKey(_ code: Int32) -> Key {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_HOME: return .home
        case KEY_END: return .end
        case KEY_ENTER: return .enter
        case KEY_BACKSPACE, KEY_DC: return .backspace
        case KEY_RESIZE: return .resize
        case KEY_BTAB: return .tab
        default: return .other(code)
        }
    }

    private static func characterKey(_ code: wint_t) -> Key {
        switch code {
        case 9: return .tab
        case 10, 13: return .enter
        case 27: return .escape
        case 8, 127: return .backspace
        case 1...26: return .control(Character(Unicode.Scalar(UInt8(code) + 96)))
        default:
            guard let scalar = Unicode.Scalar(UInt32(code)) else { return .other(Int32(bitPattern: code)) }
            return .character(Character(scalar))
        }
    }

    // MARK: Drawing

    /// An attribute value for `put` and friends.
    func attributes(_ style: Int16? = nil, bold: Bool = false, reverse: Bool = false, dim: Bool = false) -> Int32 {
        var value: Int32 = 0
        if let style, hasColors { value |= COLOR_PAIR(Int32(style)) }
        if bold { value |= navsync_attr_bold() }
        if reverse { value |= navsync_attr_reverse() }
        if dim { value |= navsync_attr_dim() }
        return value
    }

    /// Clears everything to blanks drawn with `background`.
    func clear(background: Int32) {
        wbkgdset(window, chtype(UInt32(bitPattern: background)) | chtype(UInt8(ascii: " ")))
        werase(window)
    }

    /// Paints `width` blank cells from (row, column).
    func fill(row: Int, column: Int, width: Int, _ attributes: Int32) {
        guard width > 0 else { return }
        put(String(repeating: " ", count: width), row: row, column: column, attributes)
    }

    /// Writes `text` at (row, column), cut to the screen's right edge.
    func put(_ text: String, row: Int, column: Int, _ attributes: Int32) {
        guard row >= 0, row < rows, column >= 0, column < columns else { return }
        let visible = TextCells.prefix(text, fitting: columns - column)
        wattrset(window, attributes)
        wmove(window, Int32(row), Int32(column))
        waddstr(window, visible)
        wattrset(window, 0)
    }

    /// Draws a line-drawing frame around the given rectangle (its outer edge).
    func frame(top: Int, left: Int, height: Int, width: Int, _ attributes: Int32) {
        guard height >= 2, width >= 2 else { return }
        let bottom = top + height - 1
        let right = left + width - 1
        wattrset(window, attributes)
        func at(_ row: Int, _ column: Int, _ letter: Character) {
            guard row >= 0, row < rows, column >= 0, column < columns else { return }
            mvwaddch(window, Int32(row), Int32(column), navsync_acs(CChar(letter.asciiValue!)) | chtype(UInt32(bitPattern: attributes)))
        }
        for column in (left + 1)..<right {
            at(top, column, "q")
            at(bottom, column, "q")
        }
        for row in (top + 1)..<bottom {
            at(row, left, "x")
            at(row, right, "x")
        }
        at(top, left, "l")
        at(top, right, "k")
        at(bottom, left, "m")
        at(bottom, right, "j")
        wattrset(window, 0)
    }

    /// Shows the cursor at (row, column), or hides it.
    func cursor(row: Int? = nil, column: Int? = nil) {
        if let row, let column {
            curs_set(1)
            wmove(window, Int32(row), Int32(column))
        } else {
            curs_set(0)
        }
    }

    /// Sends the frame to the terminal.
    func show() {
        wrefresh(window)
    }

    /// Makes the next `show` repaint every cell (Ctrl-L).
    func repaintEverything() {
        clearok(window, true)
    }
}

/// Terminal cell widths of text, for centring and cutting.
enum TextCells {
    static func width(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + cellWidth($1) }
    }

    /// The longest prefix of `text` that fits in `cells` columns. Control
    /// characters (which data may hold: tabs, escape sequences) become `?`,
    /// so nothing from the daemon can move the cursor or change the terminal.
    static func prefix(_ text: String, fitting cells: Int) -> String {
        var used = 0
        var out = String.UnicodeScalarView()
        for original in text.unicodeScalars {
            let scalar = isControl(original) ? "?" : original
            let w = cellWidth(scalar)
            if used + w > cells { break }
            used += w
            out.append(scalar)
        }
        return String(out)
    }

    /// Cuts `text` to `cells` columns, ending in `ellipsis` when something was cut.
    static func truncate(_ text: String, to cells: Int, ellipsis: String) -> String {
        guard width(text) > cells else { return text }
        let room = cells - width(ellipsis)
        guard room > 0 else { return prefix(text, fitting: cells) }
        return prefix(text, fitting: room) + ellipsis
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func cellWidth(_ scalar: Unicode.Scalar) -> Int {
        if isControl(scalar) { return 1 }
        if scalar.value < 0x7F { return 1 }
        let w = navsync_wcwidth(scalar.value)
        return w < 0 ? 1 : Int(w)
    }
}
