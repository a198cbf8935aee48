// The `--screens` JSON loader on arbitrary bytes. Properties:
//   - it never crashes; a refusal names a problem;
//   - an accepted catalog keeps every invariant the daemon relies on: at
//     least one screen, valid unique names (never `-`), titles and messages
//     of one line without control characters, every `next` in the catalog,
//     an initial screen that needs no data; lookups agree with the list;
//   - a room can start on it and NEXT from every screen either moves to a
//     screen of the catalog or is `no-next` / a data-rule `bad-args`.
import NavSyncCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCatalog(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    let bytes = input.rest()
    let catalog: Catalog
    do {
        catalog = try CatalogFile.decode(bytes)
    } catch {
        require(!error.description.isEmpty, "a refused catalog says why", bytes.shown)
        return 0
    }
    require(!catalog.screens.isEmpty, "an accepted catalog has screens", bytes.shown)
    var seen: Set<String> = []
    for screen in catalog.screens {
        require(Names.isValid(screen.name) && screen.name != "-", "screen names are well-formed", screen.name)
        for text in [screen.title, screen.message] {
            require(!text.unicodeScalars.contains { $0.properties.generalCategory == .control || $0 == "\u{2028}" || $0 == "\u{2029}" },
                    "titles and messages are one line without control characters", bytes.shown)
        }
        require(seen.insert(screen.name).inserted, "screen names are unique", screen.name)
        require(catalog[screen.name] == screen, "lookup finds the listed screen", screen.name)
        if let next = screen.next {
            require(catalog[next] != nil, "every next is in the catalog", next)
        }
    }
    // Titles come from the file; SCREENS must still list each screen on one line.
    let listing = Wire.screens(catalog)
    require(listing.filter { $0 == UInt8(ascii: "\n") }.count == catalog.screens.count + 1,
            "SCREENS is one line per screen plus END", bytes.shown)
    guard let initial = catalog[catalog.initial] else { violated("the initial screen is in the catalog", bytes.shown) }
    require(initial.data != .required, "the initial screen needs no data", bytes.shown)

    require(Route.decode(Route.encode(catalog.initialStack)) == .success(Navigation(stack: catalog.initialStack)),
            "a room can start on the initial screen", bytes.shown)
    for screen in catalog.screens {
        let state = RoomState(stack: [RouteEntry(screen: screen.name, data: screen.data == .required ? "x" : nil)],
                              revision: 1)
        for data in [nil, "x"] as [String?] {
            do {
                if let moved = try Reducer.apply(.next(data: data), to: state, catalog: catalog, maxDepth: 4) {
                    require(moved.revision == 2 && moved.stack.count == 1, "NEXT replaces the top entry", bytes.shown)
                    require(catalog[moved.stack[0].screen] != nil, "NEXT lands in the catalog", bytes.shown)
                }
            } catch {
                require(error.code == .noNext || error.code == .badArgs, "NEXT fails only as no-next or bad-args",
                        "\(error) for \(screen.name)")
            }
        }
    }
    return 0
}
