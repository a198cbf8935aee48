import XCTest
import NavSyncCore

final class RouteTests: XCTestCase {
    private func entry(_ screen: String, _ data: String? = nil) -> RouteEntry {
        RouteEntry(screen: screen, data: data)
    }

    /// The stack of a route that has no sheets; nil for any other.
    private func decoded(_ text: String) -> [RouteEntry]? {
        guard let navigation = try? Route.decode(text).get(), navigation.sheets.isEmpty else { return nil }
        return navigation.stack
    }

    private func decodeError(_ text: String) -> RouteError? {
        if case .failure(let error) = Route.decode(text) { return error }
        return nil
    }

    // MARK: - The contract's example

    func test_route_contractExample_encodesAndDecodes() {
        let stack = [entry("viewA"), entry("viewB", "some Data from A")]
        XCTAssertEqual(Route.encode(stack), "/viewA/viewB:some%20Data%20from%20A")
        XCTAssertEqual(decoded("/viewA/viewB:some%20Data%20from%20A"), stack)
    }

    func test_route_plainStack_encodesAsPath() {
        XCTAssertEqual(Route.encode([entry("red")]), "/red")
        XCTAssertEqual(Route.encode([entry("red"), entry("green"), entry("blue")]), "/red/green/blue")
        XCTAssertEqual(decoded("/red/green/blue"), [entry("red"), entry("green"), entry("blue")])
    }

    // MARK: - Encoding

    func test_route_utf8Data_isPercentEncodedByteWise() {
        XCTAssertEqual(Route.encode([entry("blue", "caf\u{E9}")]), "/blue:caf%C3%A9")
        XCTAssertEqual(Route.encode([entry("blue", "\u{1F389}")]), "/blue:%F0%9F%8E%89")
        XCTAssertEqual(Route.encode([entry("blue", "\u{65E5}\u{672C}")]), "/blue:%E6%97%A5%E6%9C%AC")
    }

    func test_route_reservedCharacters_areEscaped() {
        XCTAssertEqual(Route.percentEncode(" "), "%20")
        XCTAssertEqual(Route.percentEncode("/"), "%2F")
        XCTAssertEqual(Route.percentEncode(":"), "%3A")
        XCTAssertEqual(Route.percentEncode("%"), "%25")
        XCTAssertEqual(Route.percentEncode("+"), "%2B")
        XCTAssertEqual(Route.percentEncode("\t\n\r"), "%09%0A%0D")
        XCTAssertEqual(Route.percentEncode("a b/c:d%e+f~g"), "a%20b%2Fc%3Ad%25e%2Bf~g")
    }

    func test_route_unreservedCharacters_stayLiteral() {
        let unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        XCTAssertEqual(Route.percentEncode(unreserved), unreserved)
    }

    func test_route_encode_usesUppercaseHex() {
        let encoded = Route.percentEncode("\u{FF}\u{AB}\u{CD}\u{EF} :/\u{1F389}")
        XCTAssertEqual(encoded, "%C3%BF%C2%AB%C3%8D%C3%AF%20%3A%2F%F0%9F%8E%89")
        XCTAssertEqual(encoded, encoded.uppercased())
    }

    func test_route_everyByte_escapesAsExpected() {
        // Each ASCII byte alone: unreserved ones stay, the rest become %XX.
        for byte in UInt8(0)...UInt8(127) {
            let text = String(decoding: [byte], as: UTF8.self)
            let scalar = Character(Unicode.Scalar(byte))
            let unreserved = scalar.isASCII && (scalar.isLetter || scalar.isNumber || "-._~".contains(scalar))
            let expected = unreserved ? text : "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            XCTAssertEqual(Route.percentEncode(text), expected, "byte \(byte)")
        }
    }

    // MARK: - Decoding

    func test_route_decode_acceptsLowercaseAndMixedHex() {
        XCTAssertEqual(decoded("/blue:caf%c3%a9"), [entry("blue", "caf\u{E9}")])
        XCTAssertEqual(decoded("/blue:caf%C3%a9"), [entry("blue", "caf\u{E9}")])
        XCTAssertEqual(decoded("/blue:%2f%3a%25"), [entry("blue", "/:%")])
    }

    func test_route_decode_keepsPlusAsPlus() {
        XCTAssertEqual(decoded("/blue:a+b"), [entry("blue", "a+b")])
        XCTAssertEqual(decoded("/blue:a%2Bb"), [entry("blue", "a+b")])
        XCTAssertEqual(Route.encode([entry("blue", "a+b")]), "/blue:a%2Bb")
    }

    func test_route_reencodingLowercaseHex_givesCanonicalUppercase() {
        let lower = "/red/blue:%e6%97%a5%2f%c3%a9%20x"
        guard let stack = decoded(lower) else { return XCTFail("\(lower) did not decode") }
        XCTAssertEqual(Route.encode(stack), "/red/blue:%E6%97%A5%2F%C3%A9%20x")
    }

    func test_route_decode_emptyDataIsNone() {
        XCTAssertEqual(decoded("/blue:"), [entry("blue")])
        XCTAssertNil(decoded("/blue:")?.first?.data)
        XCTAssertEqual(Route.encode([entry("blue", "")]), "/blue")
    }

    func test_route_decode_dataMayHoldEncodedSlashesAndColons() {
        XCTAssertEqual(decoded("/blue:a%2Fb%3Ac/red"), [entry("blue", "a/b:c"), entry("red")])
    }

    func test_route_decode_reportsEachMalformation() {
        XCTAssertEqual(decodeError(""), .missingLeadingSlash)
        XCTAssertEqual(decodeError("red"), .missingLeadingSlash)
        XCTAssertEqual(decodeError("/"), .empty)
        XCTAssertEqual(decodeError("/red//green"), .emptySegment)
        XCTAssertEqual(decodeError("/red/"), .emptySegment)
        XCTAssertEqual(decodeError("/:data"), .badName(""))
        XCTAssertEqual(decodeError("/r\u{E9}d"), .badName("r\u{E9}d"))
        XCTAssertEqual(decodeError("/" + String(repeating: "n", count: 65)), .badName(String(repeating: "n", count: 65)))
        XCTAssertEqual(decodeError("/blue:%zz"), .badEscape)
        XCTAssertEqual(decodeError("/blue:%4"), .badEscape)
        XCTAssertEqual(decodeError("/blue:%"), .badEscape)
        XCTAssertEqual(decodeError("/blue:%4/red"), .badEscape)
        XCTAssertEqual(decodeError("/blue:%ff"), .notUTF8)
        XCTAssertEqual(decodeError("/blue:%C3"), .notUTF8)
    }

    func test_route_decode_acceptsLongestName() {
        let name = String(repeating: "n", count: Names.maxLength)
        XCTAssertEqual(decoded("/" + name), [entry(name)])
    }

    // MARK: - Round trips

    func test_route_handPickedStacks_roundTrip() {
        let stacks: [[RouteEntry]] = [
            [entry("red")],
            [entry("blue", " leading and trailing ")],
            [entry("blue", "100% + 1 ~ 2 / 3 : 4")],
            [entry("a"), entry("b", "caf\u{E9}"), entry("c", "\u{1F389}\u{1F1EF}\u{1F1F5}"), entry("d", "\u{65E5}\u{672C}\u{8A9E}")],
            [entry("blue", "e\u{301}")],   // decomposed é must stay decomposed
            [entry("blue", "line\nbreak\r\ttab\u{0}nul")],
        ]
        for stack in stacks {
            let route = Route.encode(stack)
            XCTAssertFalse(route.contains(" "), route)
            XCTAssertEqual(decoded(route), stack, route)
        }
        XCTAssertEqual(Array(decoded(Route.encode([entry("blue", "e\u{301}")]))![0].data!.utf8),
                       Array("e\u{301}".utf8), "data is kept byte for byte, not normalised")
    }

    func test_route_randomStacks_roundTrip() {
        var rng = SplitMix64(seed: 20_240_601)
        let nameBytes = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-".utf8)
        let dataScalars: [Unicode.Scalar] = Array("aZ09-._~ /:%+?#&=\t\n\r\"'\\".unicodeScalars) + [
            "\u{0}", "\u{7F}", "\u{E9}", "\u{301}", "\u{65E5}", "\u{8A9E}", "\u{1F389}", "\u{1F600}",
            "\u{FEFF}", "\u{10FFFF}", "\u{FFFD}",
        ]
        for round in 0..<400 {
            let depth = Int.random(in: 1...8, using: &rng)
            var stack: [RouteEntry] = []
            for _ in 0..<depth {
                let nameLength = Bool.random(using: &rng) ? Int.random(in: 1...8, using: &rng)
                                                          : Int.random(in: 1...Names.maxLength, using: &rng)
                let name = String(decoding: (0..<nameLength).map { _ in nameBytes.randomElement(using: &rng)! },
                                  as: UTF8.self)
                var data: String?
                if Int.random(in: 0..<3, using: &rng) > 0 {
                    var scalars = String.UnicodeScalarView()
                    for _ in 0..<Int.random(in: 0...20, using: &rng) {
                        scalars.append(dataScalars.randomElement(using: &rng)!)
                    }
                    data = String(scalars)
                }
                stack.append(RouteEntry(screen: name, data: data))
            }
            let route = Route.encode(stack)
            XCTAssertEqual(decoded(route), stack, "round \(round): \(route)")
            XCTAssertEqual(route.utf8.count(where: { $0 == UInt8(ascii: "/") }), depth, "round \(round)")
            XCTAssertFalse(route.contains(where: { $0 == " " || $0 == "\n" || $0 == "\t" }), "round \(round)")
        }
    }

    // MARK: - RouteEntry

    func test_routeEntry_emptyData_isStoredAsNil() {
        XCTAssertNil(RouteEntry(screen: "blue", data: "").data)
        XCTAssertEqual(RouteEntry(screen: "blue", data: ""), RouteEntry(screen: "blue"))
        XCTAssertEqual(RouteEntry(screen: "blue", data: " ").data, " ", "only empty, not blank, is none")
    }

    // MARK: - Sheets

    func test_route_sheets_encodeAfterTheStack() {
        XCTAssertEqual(Route.encode([entry("red"), entry("green")], sheets: [entry("blue", "a note"), entry("red")]),
                       "/red/green#blue:a%20note#red")
        XCTAssertEqual(Route.encode([entry("red")], sheets: []), "/red", "no sheets: the version-1 form")
        XCTAssertEqual(Route.encode(Navigation(stack: [entry("red")], sheets: [entry("blue", "#")])), "/red#blue:%23")
    }

    func test_route_sheets_decodeFromTheContractsExample() {
        XCTAssertEqual(try Route.decode("/red/green#blue:a%20note#red").get(),
                       Navigation(stack: [entry("red"), entry("green")], sheets: [entry("blue", "a note"), entry("red")]))
        XCTAssertEqual(try Route.decode("/red").get(), Navigation(stack: [entry("red")]))
    }

    func test_route_sheets_roundTrip() {
        let cases: [Navigation] = [
            Navigation(stack: [entry("a")], sheets: [entry("b")]),
            Navigation(stack: [entry("a"), entry("b", "x/y:z#w%")], sheets: [entry("c", "#"), entry("d"), entry("e", " ")]),
            Navigation(stack: [entry("a", "caf\u{E9}")], sheets: []),
        ]
        for navigation in cases {
            let text = Route.encode(navigation)
            XCTAssertEqual(try Route.decode(text).get(), navigation, text)
            XCTAssertEqual(Route.encode(try Route.decode(text).get()), text)
        }
    }

    func test_route_escapedHashInData_decodesAsData() {
        XCTAssertEqual(try Route.decode("/blue:a%23b").get(), [entry("blue", "a#b")])
        XCTAssertEqual(try Route.decode("/red#blue:%23").get(), Navigation(stack: [entry("red")], sheets: [entry("blue", "#")]))
    }

    func test_route_malformedSheets_areRefused() {
        XCTAssertEqual(decodeError("/red#"), .emptySheet)
        XCTAssertEqual(decodeError("/red##blue"), .emptySheet)
        XCTAssertEqual(decodeError("/red##x"), .emptySheet)
        XCTAssertEqual(decodeError("/red#blue#"), .emptySheet)
        XCTAssertEqual(decodeError("#red"), .missingLeadingSlash)
        XCTAssertEqual(decodeError("/#red"), .empty)
        XCTAssertEqual(decodeError("/red#blue/green"), .sheetWithSlash)
        XCTAssertEqual(decodeError("/red/#blue"), .emptySegment)
        XCTAssertEqual(decodeError("/red#bl%ue"), .badName("bl%ue"))
        XCTAssertEqual(decodeError("/red#blue:%2"), .badEscape)
        XCTAssertEqual(decodeError("/red#:x"), .badName(""))
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: Swift.max(0, width - count)) + self
    }
}
