import GNUFlags
import XCTest

final class CommandLineSpecTests: XCTestCase {
    private let spec = CommandLineSpec(valued: ["listen", "state"], switches: ["help"], shortAliases: ["h": "help", "n": "listen"])

    func test_parse_separateAndInlineValues_keepOrderAndRepeats() throws {
        let parsed = try spec.parse(["--listen", "a:1", "--listen=b:2", "--state=", "x", "-h"])
        XCTAssertEqual(parsed.values("listen"), ["a:1", "b:2"])
        XCTAssertEqual(parsed.last("state"), "")
        XCTAssertTrue(parsed.has("help"))
        XCTAssertEqual(parsed.positionals, ["x"])
    }

    func test_parse_doubleDash_endsFlags() throws {
        let parsed = try spec.parse(["--", "--listen", "-h"])
        XCTAssertEqual(parsed.positionals, ["--listen", "-h"])
        XCTAssertFalse(parsed.has("help"))
    }

    func test_parse_shortAlias_takesItsLongNamesValue() throws {
        XCTAssertEqual(try spec.parse(["-n", "c:3"]).last("listen"), "c:3")
    }

    func test_parse_mistakes_areUsageErrors() {
        for (arguments, message) in [
            (["--nope"], "unknown option --nope"),
            (["-x"], "unknown option -x"),
            (["--listen"], "--listen needs a value"),
            (["--help=yes"], "--help takes no value"),
        ] {
            XCTAssertThrowsError(try spec.parse(arguments), "\(arguments)") { error in
                XCTAssertEqual((error as? CommandLineSpec.UsageError)?.description, message)
            }
        }
    }

    func test_positiveInt_refusesBelowMinimumAndText() {
        XCTAssertEqual(try CommandLineSpec.positiveInt("5", flag: "n"), 5)
        XCTAssertEqual(try CommandLineSpec.positiveInt("0", flag: "n", minimum: 0), 0)
        for text in ["0", "-1", "abc", ""] {
            XCTAssertThrowsError(try CommandLineSpec.positiveInt(text, flag: "n"), text)
        }
    }
}
