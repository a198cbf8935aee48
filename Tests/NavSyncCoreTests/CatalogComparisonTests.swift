import NavSyncCore
import XCTest

final class CatalogComparisonTests: XCTestCase {
    private let flow: Catalog = try! Catalog(initial: "viewA", screens: [
        Screen(name: "viewA", title: "View A", color: .cyan, message: "Start here", next: "viewB"),
        Screen(name: "viewB", title: "View B", color: .magenta, message: "Got \"data\" / from A", next: "viewC", data: .required),
        Screen(name: "viewC", title: "View C", color: .yellow, message: "", next: nil, data: .optional),
    ])

    func test_catalogEncode_roundTrips_andIsStable() throws {
        for catalog in [Catalog.builtIn, flow] {
            let bytes = CatalogFile.encode(catalog)
            XCTAssertEqual(try CatalogFile.decode(bytes), catalog)
            XCTAssertEqual(CatalogFile.encode(try CatalogFile.decode(bytes)), bytes)
        }
    }

    func test_catalogFirstDifference_namesTheField() throws {
        XCTAssertNil(flow.firstDifference(from: flow))
        XCTAssertNil(flow.firstDifference(from: try CatalogFile.decode(Array("""
            { "screens": [
                {"data": "none", "name": "viewA", "title": "View A", "color": "cyan", "message": "Start here", "next": "viewB"},
                {"name": "viewB", "title": "View B", "color": "magenta", "message": "Got \\"data\\" / from A", "next": "viewC", "data": "required"},
                {"name": "viewC", "title": "View C", "color": "yellow", "data": "optional"}
              ], "initial": "viewA" }
            """.utf8))), "the same content written differently is the same catalog")
        var screens = flow.screens
        screens[1].message = "Changed"
        XCTAssertEqual(flow.firstDifference(from: try Catalog(initial: "viewA", screens: screens)),
                       "screens[1].message: \"Got \"data\" / from A\" here, \"Changed\" there")
        screens = flow.screens
        screens[2].next = "viewA"
        XCTAssertEqual(flow.firstDifference(from: try Catalog(initial: "viewA", screens: screens)),
                       "screens[2].next: none here, \"viewA\" there")
        XCTAssertEqual(flow.firstDifference(from: try Catalog(initial: "viewC", screens: flow.screens)),
                       "initial: \"viewA\" here, \"viewC\" there")
        XCTAssertEqual(flow.firstDifference(from: try Catalog(initial: "viewA", screens: Array(flow.screens.prefix(2)) .map {
            var s = $0; if s.next == "viewC" { s.next = nil }; return s })),
                       "screens[1].next: \"viewC\" here, none there")
        XCTAssertEqual(Catalog.builtIn.firstDifference(from: flow), "initial: \"red\" here, \"viewA\" there")
    }
}
