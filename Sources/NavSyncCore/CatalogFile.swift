import Foundation

/// Reads the `--screens` JSON format. Unknown keys are refused so a typo such
/// as `"colour"` is reported instead of silently ignored; for the same
/// reason the text must be strict JSON (no trailing comma, no key twice),
/// checked before the decoder, which is more lenient, sees it.
public enum CatalogFile {
    public static func decode(_ json: [UInt8]) throws(CatalogError) -> Catalog {
        do {
            try StrictJSON.validate(json)
        } catch {
            throw CatalogError(field: "", problem: "not valid JSON: \(error)")
        }
        let file: FileShape
        do {
            file = try JSONDecoder().decode(FileShape.self, from: Data(json))
        } catch let error as CatalogError {
            throw error
        } catch let error as DecodingError {
            throw CatalogError(decoding: error)
        } catch {
            throw CatalogError(field: "", problem: "not valid JSON")
        }
        return try Catalog(initial: file.initial, screens: file.screens.map(\.screen))
    }

    private struct FileShape: Decodable {
        var initial: String
        var screens: [ScreenShape]

        enum CodingKeys: String, CodingKey, CaseIterable { case initial, screens }

        init(from decoder: any Decoder) throws {
            try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue))
            let c = try decoder.container(keyedBy: CodingKeys.self)
            initial = try c.decode(String.self, forKey: .initial)
            screens = try c.decode([ScreenShape].self, forKey: .screens)
        }
    }

    private struct ScreenShape: Decodable {
        var screen: Screen

        enum CodingKeys: String, CodingKey, CaseIterable { case name, title, color, message, next, data }

        init(from decoder: any Decoder) throws {
            try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue))
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let colorName = try c.decode(String.self, forKey: .color)
            guard let color = ScreenColor(rawValue: colorName) else {
                throw CatalogError(
                    field: pathText(c.codingPath + [CodingKeys.color]),
                    problem: "\"\(colorName)\" is not one of \(ScreenColor.allCases.map(\.rawValue).joined(separator: " "))")
            }
            let ruleName = try c.decodeIfPresent(String.self, forKey: .data) ?? DataRule.none.rawValue
            guard let rule = DataRule(rawValue: ruleName) else {
                throw CatalogError(
                    field: pathText(c.codingPath + [CodingKeys.data]),
                    problem: "\"\(ruleName)\" is not one of none optional required")
            }
            screen = Screen(
                name: try c.decode(String.self, forKey: .name),
                title: try c.decode(String.self, forKey: .title),
                color: color,
                message: try c.decodeIfPresent(String.self, forKey: .message) ?? "",
                next: try c.decodeIfPresent(String.self, forKey: .next),
                data: rule)
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { return nil }
    }

    private static func rejectUnknownKeys(_ decoder: any Decoder, allowed: [String]) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        if let unknown = c.allKeys.map(\.stringValue).sorted().first(where: { !allowed.contains($0) }) {
            throw CatalogError(field: pathText(decoder.codingPath + [AnyKey(stringValue: unknown)]),
                               problem: "unknown key (expected one of \(allowed.joined(separator: " ")))")
        }
    }

    static func pathText(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let i = key.intValue {
                text += "[\(i)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }
}

extension CatalogError {
    init(decoding error: DecodingError) {
        switch error {
        case .keyNotFound(let key, let context):
            self.init(field: CatalogFile.pathText(context.codingPath + [key]), problem: "is missing")
        case .typeMismatch(let type, let context):
            self.init(field: CatalogFile.pathText(context.codingPath), problem: "should be \(Self.jsonKind(type))")
        case .valueNotFound(let type, let context):
            self.init(field: CatalogFile.pathText(context.codingPath), problem: "should be \(Self.jsonKind(type)), not null")
        case .dataCorrupted(let context):
            let path = CatalogFile.pathText(context.codingPath)
            self.init(field: path, problem: path.isEmpty ? "not valid JSON" : context.debugDescription)
        @unknown default:
            self.init(field: "", problem: "not a valid catalog")
        }
    }

    private static func jsonKind(_ type: Any.Type) -> String {
        if type == String.self { return "a string" }
        if type is [Any].Type { return "an array" }
        return "an object"
    }
}
