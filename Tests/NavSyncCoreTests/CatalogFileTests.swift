import XCTest
import NavSyncCore

final class CatalogFileTests: XCTestCase {
    /// The A → B → C flow of the contract, laid out in our own way.
    private let flowJSON = """
    {
      "initial": "viewA",
      "screens": [
        { "name": "viewA", "title": "View A", "color": "cyan",
          "message": "Start here", "next": "viewB", "data": "none" },
        { "name": "viewB", "title": "View B", "color": "magenta",
          "message": "Got data from A", "next": "viewC", "data": "required" },
        { "name": "viewC", "title": "View C", "color": "yellow",
          "message": "Last stop", "next": "viewA" }
      ]
    }
    """

    private func decode(_ json: String) throws(CatalogError) -> Catalog {
        try CatalogFile.decode(Array(json.utf8))
    }

    /// The error a file is refused with; records a failure if it is accepted.
    private func refusal(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> CatalogError? {
        do {
            let catalog = try decode(json)
            XCTFail("accepted: \(catalog.screens.map(\.name))", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    /// A one-screen file with `screen` as the screen's JSON members.
    private func single(_ screen: String, initial: String = "s") -> String {
        #"{"initial": "\#(initial)", "screens": [{\#(screen)}]}"#
    }

    // MARK: - Good files

    func test_catalogFile_contractExample_decodes() throws {
        let catalog = try decode(flowJSON)
        XCTAssertEqual(catalog.initial, "viewA")
        XCTAssertEqual(catalog.initialStack, [RouteEntry(screen: "viewA")])
        XCTAssertEqual(catalog.screens, [
            Screen(name: "viewA", title: "View A", color: .cyan, message: "Start here", next: "viewB", data: .none),
            Screen(name: "viewB", title: "View B", color: .magenta, message: "Got data from A", next: "viewC",
                   data: .required),
            Screen(name: "viewC", title: "View C", color: .yellow, message: "Last stop", next: "viewA", data: .none),
        ])
        XCTAssertEqual(catalog["viewB"]?.data, .required)
    }

    func test_catalogFile_optionalMembers_takeDefaults() throws {
        let catalog = try decode(single(#""name": "s", "title": "Only", "color": "white""#))
        XCTAssertEqual(catalog.screens, [Screen(name: "s", title: "Only", color: .white, message: "", next: nil, data: .none)])
    }

    func test_catalogFile_nullNext_meansNoNext() throws {
        let catalog = try decode(single(#""name": "s", "title": "S", "color": "red", "next": null"#))
        XCTAssertNil(catalog["s"]?.next)
    }

    func test_catalogFile_everyColorAndDataRule_isAccepted() throws {
        for color in ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"] {
            XCTAssertEqual(try decode(single(#""name": "s", "title": "S", "color": "\#(color)""#)).screens[0].color.rawValue,
                           color)
        }
        for rule in ["none", "optional"] {
            XCTAssertEqual(try decode(single(#""name": "s", "title": "S", "color": "red", "data": "\#(rule)""#))
                .screens[0].data.rawValue, rule)
        }
    }

    func test_catalogFile_keyOrderAndWhitespace_doNotMatter() throws {
        let json = "{\"screens\":[{\"color\":\"red\",\"title\":\"T\",\"name\":\"s\"}],\n\t\"initial\":\"s\"}"
        XCTAssertEqual(try decode(json).screens.map(\.name), ["s"])
    }

    // MARK: - Missing and unknown keys

    func test_catalogFile_missingInitial_namesField() {
        let error = refusal(#"{"screens": [{"name": "s", "title": "S", "color": "red"}]}"#)
        XCTAssertEqual(error?.field, "initial")
        XCTAssertTrue(error?.description.contains("initial") ?? false, error?.description ?? "")
    }

    func test_catalogFile_missingScreens_namesField() {
        let error = refusal(#"{"initial": "s"}"#)
        XCTAssertEqual(error?.field, "screens")
        XCTAssertTrue(error?.description.contains("screens") ?? false, error?.description ?? "")
    }

    func test_catalogFile_missingScreenMember_namesPath() {
        let json = #"{"initial": "a", "screens": [{"name": "a", "title": "A", "color": "red"}, {"name": "b", "color": "red"}]}"#
        XCTAssertEqual(refusal(json)?.field, "screens[1].title")
        XCTAssertEqual(refusal(single(#""name": "s", "title": "S""#))?.field, "screens[0].color")
        XCTAssertEqual(refusal(single(#""title": "S", "color": "red""#))?.field, "screens[0].name")
    }

    func test_catalogFile_unknownScreenKey_isRefusedByName() {
        let error = refusal(single(#""name": "s", "title": "S", "colour": "red""#))
        XCTAssertEqual(error?.field, "screens[0].colour", "the typo is reported, not the missing color")
        XCTAssertTrue(error?.description.contains("colour") ?? false, error?.description ?? "")
    }

    func test_catalogFile_unknownTopLevelKey_isRefusedByName() {
        let error = refusal(#"{"initial": "s", "version": 2, "screens": [{"name": "s", "title": "S", "color": "red"}]}"#)
        XCTAssertEqual(error?.field, "version")
    }

    // MARK: - Bad values

    func test_catalogFile_badColor_namesPathAndValue() {
        let json = #"{"initial": "a", "screens": [{"name": "a", "title": "A", "color": "red"}, {"name": "b", "title": "B", "color": "orange"}]}"#
        let error = refusal(json)
        XCTAssertEqual(error?.field, "screens[1].color")
        XCTAssertTrue(error?.description.contains("screens[1].color") ?? false, error?.description ?? "")
        XCTAssertTrue(error?.description.contains("orange") ?? false, error?.description ?? "")
    }

    func test_catalogFile_colorIsCaseSensitive() {
        XCTAssertEqual(refusal(single(#""name": "s", "title": "S", "color": "Red""#))?.field, "screens[0].color")
    }

    func test_catalogFile_badDataRule_namesPath() {
        let json = #"{"initial": "a", "screens": [{"name": "a", "title": "A", "color": "red"}, {"name": "b", "title": "B", "color": "red", "data": "sometimes"}]}"#
        let error = refusal(json)
        XCTAssertEqual(error?.field, "screens[1].data")
        XCTAssertTrue(error?.description.contains("sometimes") ?? false, error?.description ?? "")
    }

    func test_catalogFile_duplicateNames_areRefused() {
        let json = #"{"initial": "a", "screens": [{"name": "a", "title": "A", "color": "red"}, {"name": "a", "title": "A2", "color": "blue"}]}"#
        let error = refusal(json)
        XCTAssertEqual(error?.field, "screens[1].name")
        XCTAssertTrue(error?.description.contains("twice") ?? false, error?.description ?? "")
    }

    func test_catalogFile_invalidScreenName_isRefused() {
        XCTAssertEqual(refusal(single(#""name": "view A", "title": "S", "color": "red""#, initial: "view A"))?.field,
                       "screens[0].name")
        XCTAssertEqual(refusal(single(#""name": "", "title": "S", "color": "red""#, initial: ""))?.field,
                       "screens[0].name")
        let long = String(repeating: "x", count: 65)
        XCTAssertEqual(refusal(single(#""name": "\#(long)", "title": "S", "color": "red""#, initial: long))?.field,
                       "screens[0].name")
    }

    func test_catalogFile_nextNamingMissingScreen_isRefused() {
        let json = #"{"initial": "a", "screens": [{"name": "a", "title": "A", "color": "red", "next": "b"}, {"name": "b", "title": "B", "color": "red", "next": "zzz"}]}"#
        let error = refusal(json)
        XCTAssertEqual(error?.field, "screens[1].next")
        XCTAssertTrue(error?.description.contains("zzz") ?? false, error?.description ?? "")
    }

    func test_catalogFile_initialRequiringData_isRefused() {
        let error = refusal(single(#""name": "s", "title": "S", "color": "red", "data": "required""#))
        XCTAssertEqual(error?.field, "initial")
        XCTAssertTrue(error?.description.contains("requires data") ?? false, error?.description ?? "")
    }

    func test_catalogFile_initialNotInFile_isRefused() {
        XCTAssertEqual(refusal(single(#""name": "s", "title": "S", "color": "red""#, initial: "t"))?.field, "initial")
    }

    func test_catalogFile_emptyScreens_isRefused() {
        XCTAssertEqual(refusal(#"{"initial": "s", "screens": []}"#)?.field, "screens")
    }

    func test_catalogFile_wrongTypes_namePath() {
        XCTAssertEqual(refusal(#"{"initial": 3, "screens": [{"name": "s", "title": "S", "color": "red"}]}"#)?.field,
                       "initial")
        XCTAssertEqual(refusal(#"{"initial": "s", "screens": {"name": "s"}}"#)?.field, "screens")
        XCTAssertEqual(refusal(single(#""name": "s", "title": ["S"], "color": "red""#))?.field, "screens[0].title")
        XCTAssertEqual(refusal(single(#""name": "s", "title": null, "color": "red""#))?.field, "screens[0].title")
    }

    func test_catalogFile_invalidJSON_isRefused() {
        for text in ["", "{", "not json", #"{"initial": "s", "screens": [}"#, "{\"initial\": \"s\",}x"] {
            let error = refusal(text)
            XCTAssertNotNil(error, text)
            XCTAssertTrue(error?.description.contains("JSON") ?? false, "\(text): \(error?.description ?? "")")
        }
    }

    func test_catalogFile_topLevelNotObject_isRefused() {
        XCTAssertNotNil(refusal("[]"))
        XCTAssertNotNil(refusal("\"screens\""))
    }

    func test_catalogFile_errorDescription_isFieldThenProblem() {
        XCTAssertEqual(CatalogError(field: "screens[1].color", problem: "bad").description, "screens[1].color: bad")
        XCTAssertEqual(CatalogError(field: "", problem: "not valid JSON").description, "not valid JSON")
    }

    // MARK: - The text rules: one row per rule

    func test_catalogFile_malformedTable_eachRefusedWithItsReason() {
        let ok = #""title": "S", "color": "red""#
        let rows: [(rule: String, json: String, field: String, says: String)] = [
            ("name -", single(#""name": "-", \#(ok)"#, initial: "-"), "screens[0].name", "not a screen name"),
            ("name with a space", single(#""name": "view A", \#(ok)"#, initial: "view A"), "screens[0].name",
             "1-64 characters of A-Z a-z 0-9 _ . -"),
            ("name with a slash", single(#""name": "a/b", \#(ok)"#, initial: "a/b"), "screens[0].name", "1-64 characters"),
            ("empty name", single(#""name": "", \#(ok)"#, initial: ""), "screens[0].name", "1-64 characters"),
            ("duplicate name",
             #"{"initial": "a", "screens": [{"name": "a", \#(ok)}, {"name": "a", \#(ok)}]}"#, "screens[1].name", "twice"),
            ("title with \\n", single(#""name": "s", "title": "two\nlines", "color": "red""#), "screens[0].title",
             "one line with no control characters (holds U+000A)"),
            ("title with \\r", single(#""name": "s", "title": "back\rwards", "color": "red""#), "screens[0].title",
             "U+000D"),
            ("message with \\u0007", single(#""name": "s", \#(ok), "message": "ding\u0007""#), "screens[0].message",
             "one line with no control characters (holds U+0007)"),
            ("message with a tab", single(#""name": "s", \#(ok), "message": "a\tb""#), "screens[0].message", "U+0009"),
            ("message with C1 NEL", single(#""name": "s", \#(ok), "message": "a\u0085b""#), "screens[0].message", "U+0085"),
            ("title with a line separator", single(#""name": "s", "title": "a\u2028b", "color": "red""#),
             "screens[0].title", "U+2028"),
            ("raw newline inside a string", single("\"name\": \"s\", \"title\": \"a\nb\", \"color\": \"red\""), "",
             "not valid JSON: line 1 column"),
            ("trailing comma in an object", single(#""name": "s", "title": "S", "color": "red","#), "",
             "not valid JSON: line 1 column 73: a comma before } (JSON has no trailing commas)"),
            ("trailing comma at the top", #"{"initial": "s", "screens": [{"name": "s", \#(ok)}],}"#, "",
             "a comma before }"),
            ("trailing comma in an array", #"{"initial": "s", "screens": [{"name": "s", \#(ok)},]}"#, "",
             "not valid JSON: line 1 column 74: a comma before ] (JSON has no trailing commas)"),
            ("unknown key", single(#""name": "s", "title": "S", "colour": "red""#), "screens[0].colour", "unknown key"),
            ("key given twice", single(#""name": "s", \#(ok), "color": "blue""#), "",
             #"the member name "color" appears twice in one object"#),
            ("key twice, spelt two ways", single(#""name": "s", \#(ok), "\u0063olor": "blue""#), "", "appears twice"),
            ("a comment", #"{"initial": "s", // start"# + "\n" + #""screens": [{"name": "s", \#(ok)}]}"#, "",
             "not valid JSON: line 1 column 18"),
            ("single quotes", #"{'initial': "s", "screens": [{"name": "s", \#(ok)}]}"#, "", "member name in double quotes"),
            ("text after the object", single(#""name": "s", \#(ok)"#) + " {}", "", "more text after the JSON value"),
        ]
        for row in rows {
            guard let error = refusal(row.json) else { XCTFail("\(row.rule): accepted"); continue }
            XCTAssertEqual(error.field, row.field, "\(row.rule): \(error)")
            XCTAssertTrue(error.description.contains(row.says), "\(row.rule): \(error)")
        }
    }

    func test_catalogFile_textRules_keepGoodTextAccepted() throws {
        let catalog = try decode(single(#""name": "s.-_9", "title": "Caf\u00e9 \u2014 \"ok\" / 😀", "color": "red", "message": "  spaced  ""#,
                                        initial: "s.-_9"))
        XCTAssertEqual(catalog.screens[0].title, "Café — \"ok\" / 😀")
        XCTAssertEqual(catalog.screens[0].message, "  spaced  ")
        // A byte order mark, which some editors write, is still read.
        XCTAssertNoThrow(try CatalogFile.decode([0xEF, 0xBB, 0xBF] + Array(flowJSON.utf8)))
    }

    func test_catalog_textRulesHoldForCatalogsBuiltInCode() {
        XCTAssertThrowsError(try Catalog(initial: "a", screens: [Screen(name: "a", title: "A\n", color: .red)]))
        XCTAssertThrowsError(try Catalog(initial: "-", screens: [Screen(name: "-", title: "A", color: .red)]))
        XCTAssertNoThrow(try Catalog(initial: "a", screens: [Screen(name: "a", title: "A", color: .red, message: "ok")]))
    }
}
