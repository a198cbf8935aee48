import Foundation

/// A catalog written back in the `--screens` format, and two catalogs
/// compared field by field: a backplane fleet keeps one catalog in Redis and
/// every daemon checks its own against it as parsed content, so a
/// re-indented file is the same catalog and a changed message is not.
extension CatalogFile {
    /// The catalog as `--screens` JSON, keys sorted, so the same catalog
    /// always gives the same bytes. `decode(encode(c)) == c`.
    public static func encode(_ catalog: Catalog) -> [UInt8] {
        let file = EncodedFile(initial: catalog.initial, screens: catalog.screens.map(EncodedScreen.init))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings and arrays of them always encode.
        return Array(try! encoder.encode(file))
    }

    private struct EncodedFile: Encodable {
        var initial: String
        var screens: [EncodedScreen]
    }

    private struct EncodedScreen: Encodable {
        var name: String
        var title: String
        var color: String
        var message: String
        var next: String?
        var data: String

        init(_ screen: Screen) {
            name = screen.name
            title = screen.title
            color = screen.color.rawValue
            message = screen.message
            next = screen.next
            data = screen.data.rawValue
        }
    }
}

extension Catalog {
    /// The first field in which `other` differs from this catalog, written
    /// for a person ("screens[1].message: \"Hi\" here, \"Hello\" there"),
    /// or nil when they are the same.
    public func firstDifference(from other: Catalog) -> String? {
        func quoted(_ text: String?) -> String { text.map { "\"\($0)\"" } ?? "none" }
        if initial != other.initial {
            return "initial: \(quoted(initial)) here, \(quoted(other.initial)) there"
        }
        for (i, (mine, theirs)) in zip(screens, other.screens).enumerated() {
            let fields: [(String, String?, String?)] = [
                ("name", mine.name, theirs.name), ("title", mine.title, theirs.title),
                ("color", mine.color.rawValue, theirs.color.rawValue), ("message", mine.message, theirs.message),
                ("next", mine.next, theirs.next), ("data", mine.data.rawValue, theirs.data.rawValue),
            ]
            if let (field, a, b) = fields.first(where: { $0.1 != $0.2 }) {
                return "screens[\(i)].\(field): \(quoted(a)) here, \(quoted(b)) there"
            }
        }
        if screens.count != other.screens.count {
            return "screens: \(screens.count) here, \(other.screens.count) there"
        }
        return nil
    }
}
