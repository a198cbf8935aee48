import CQREncode

/// A QR code drawn with text characters, so a phone can scan a link off a
/// terminal (`navsync link --qr`). libqrencode makes the symbol; each text
/// line shows two rows of modules with the half-block characters. The code
/// is drawn light-on-dark as a dark terminal shows it (a light module is a
/// block), with a quiet zone of two modules, which phone scanners read.
enum QRCodeText {
    static let quietZone = 2

    /// The drawing, one `\n`-ended line per two module rows; nil when the
    /// text is too long for a QR code.
    static func draw(_ text: String) -> String? {
        guard let symbol = text.withCString({ QRcode_encodeString8bit($0, 0, QR_ECLEVEL_M) }) else { return nil }
        defer { QRcode_free(symbol) }
        let width = Int(symbol.pointee.width)
        let data = symbol.pointee.data!
        let size = width + 2 * quietZone
        // Bit 0 of each module byte is "dark" (libqrencode's documented layout).
        func dark(_ row: Int, _ column: Int) -> Bool {
            let r = row - quietZone, c = column - quietZone
            guard r >= 0, r < width, c >= 0, c < width else { return false }
            return data[r * width + c] & 1 == 1
        }
        var out = ""
        for row in stride(from: 0, to: size, by: 2) {
            for column in 0..<size {
                let top = !dark(row, column)
                let bottom = row + 1 < size ? !dark(row + 1, column) : false
                switch (top, bottom) {
                case (true, true): out += "█"
                case (true, false): out += "▀"
                case (false, true): out += "▄"
                case (false, false): out += " "
                }
            }
            out += "\n"
        }
        return out
    }
}
