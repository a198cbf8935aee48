import XCTest
import NavSyncCore

final class ReducerTests: XCTestCase {
    private let builtIn = Catalog.builtIn

    /// A → B (required) → C (none, no next); plus a pair of optional-data
    /// screens that point at each other, and one that points at itself.
    private let flow: Catalog = try! Catalog(initial: "a", screens: [
        Screen(name: "a", title: "A", color: .cyan, next: "b"),
        Screen(name: "b", title: "B", color: .magenta, next: "c", data: .required),
        Screen(name: "c", title: "C", color: .yellow),
        Screen(name: "note", title: "Note", color: .white, next: "memo", data: .optional),
        Screen(name: "memo", title: "Memo", color: .black, next: "note", data: .optional),
        Screen(name: "loop", title: "Loop", color: .green, next: "loop", data: .optional),
    ])

    private func entry(_ screen: String, _ data: String? = nil) -> RouteEntry {
        RouteEntry(screen: screen, data: data)
    }

    /// Applies `mutation` to the room at `route`; the resulting route, or
    /// nil for a no-op. Checks the revision step on every change.
    private func apply(_ mutation: Mutation, on route: String, revision: UInt64 = 41,
                       catalog: Catalog? = nil, maxDepth: Int = 64,
                       file: StaticString = #filePath, line: UInt = #line) throws(ProtocolError) -> String? {
        let before = RoomState(navigation(route), revision: revision)
        guard let after = try Reducer.apply(mutation, to: before, catalog: catalog ?? builtIn, maxDepth: maxDepth) else {
            return nil
        }
        XCTAssertEqual(after.revision, revision + 1, "a change moves the revision by exactly one", file: file, line: line)
        return after.route
    }

    /// The code `mutation` is refused with on the room at `route`, or nil if it is not.
    private func refusal(_ mutation: Mutation, on route: String, catalog: Catalog? = nil,
                         maxDepth: Int = 64) -> ErrorCode? {
        do {
            _ = try Reducer.apply(mutation, to: RoomState(navigation(route), revision: 5),
                                  catalog: catalog ?? builtIn, maxDepth: maxDepth)
            return nil
        } catch {
            return error.code
        }
    }

    // MARK: - SELECT

    func test_reducer_select_replacesWholeStack() throws {
        XCTAssertEqual(try apply(.select(entry("red")), on: "/green/blue:x"), "/red")
        XCTAssertEqual(try apply(.select(entry("blue", "hi")), on: "/red"), "/blue:hi")
    }

    func test_reducer_selectOfCurrentSingleEntry_isNoOp() throws {
        XCTAssertNil(try apply(.select(entry("red")), on: "/red"))
        XCTAssertNil(try apply(.select(entry("blue", "same")), on: "/blue:same"))
    }

    func test_reducer_selectOfSameScreenWithOtherData_isChange() throws {
        XCTAssertEqual(try apply(.select(entry("blue", "new")), on: "/blue:old"), "/blue:new")
        XCTAssertEqual(try apply(.select(entry("blue")), on: "/blue:old"), "/blue")
    }

    func test_reducer_selectOfTopOfDeeperStack_isChange() throws {
        XCTAssertEqual(try apply(.select(entry("green")), on: "/red/green"), "/green")
    }

    // MARK: - PUSH

    func test_reducer_push_addsOnTop() throws {
        XCTAssertEqual(try apply(.push(entry("blue", "hello world")), on: "/green"), "/green/blue:hello%20world")
        XCTAssertEqual(try apply(.push(entry("red")), on: "/red"), "/red/red", "pushing the same screen is a change")
    }

    func test_reducer_pushUpToMaxDepth_isAllowed() throws {
        XCTAssertEqual(try apply(.push(entry("blue")), on: "/red/green", maxDepth: 3), "/red/green/blue")
    }

    func test_reducer_pushPastMaxDepth_isLimit() {
        XCTAssertEqual(refusal(.push(entry("blue")), on: "/red/green/blue", maxDepth: 3), .limit)
        let full = "/red" + String(repeating: "/green", count: Limits().maxDepth - 1)
        XCTAssertEqual(refusal(.push(entry("red")), on: full, maxDepth: Limits().maxDepth), .limit)
    }

    // MARK: - POP

    func test_reducer_pop_removesTop() throws {
        XCTAssertEqual(try apply(.pop, on: "/red/green/blue:x"), "/red/green")
        XCTAssertEqual(try apply(.pop, on: "/red/green"), "/red")
    }

    func test_reducer_popOnSingleEntry_isAtRoot() {
        XCTAssertEqual(refusal(.pop, on: "/red"), .atRoot)
        XCTAssertEqual(refusal(.pop, on: "/blue:data"), .atRoot)
    }

    // MARK: - ROOT

    func test_reducer_root_keepsBottomEntryWithItsData() throws {
        XCTAssertEqual(try apply(.root, on: "/blue:base/red/green"), "/blue:base")
    }

    func test_reducer_rootOnSingleEntry_isNoOp() throws {
        XCTAssertNil(try apply(.root, on: "/red"))
        XCTAssertNil(try apply(.root, on: "/blue:x"))
    }

    // MARK: - NEXT

    func test_reducer_next_replacesTopByCatalogNext() throws {
        XCTAssertEqual(try apply(.next(data: nil), on: "/red"), "/green")
        XCTAssertEqual(try apply(.next(data: nil), on: "/red/green"), "/red/blue")
        XCTAssertEqual(try apply(.next(data: "a note"), on: "/green"), "/blue:a%20note")
        XCTAssertEqual(try apply(.next(data: nil), on: "/blue"), "/red", "the cycle closes")
    }

    func test_reducer_next_dropsOldData() throws {
        XCTAssertEqual(try apply(.next(data: nil), on: "/note:old", catalog: flow), "/memo")
        XCTAssertEqual(try apply(.next(data: "new"), on: "/note:old", catalog: flow), "/memo:new")
        XCTAssertEqual(try apply(.next(data: nil), on: "/red/blue:old"), "/red/red")
    }

    func test_reducer_nextToSameScreen_isChangeOnlyWhenDataDiffers() throws {
        XCTAssertEqual(try apply(.next(data: nil), on: "/loop:old", catalog: flow), "/loop")
        XCTAssertNil(try apply(.next(data: nil), on: "/loop", catalog: flow))
        XCTAssertNil(try apply(.next(data: "same"), on: "/loop:same", catalog: flow))
    }

    func test_reducer_nextToRequiredScreenWithoutData_isBadArgs() {
        XCTAssertEqual(refusal(.next(data: nil), on: "/a", catalog: flow), .badArgs)
    }

    func test_reducer_nextToRequiredScreenWithData_isAllowed() throws {
        XCTAssertEqual(try apply(.next(data: "from A"), on: "/a", catalog: flow), "/b:from%20A")
    }

    func test_reducer_nextToNoneScreenWithData_isBadArgs() {
        XCTAssertEqual(refusal(.next(data: "x"), on: "/b:y", catalog: flow), .badArgs)
        XCTAssertEqual(refusal(.next(data: "x"), on: "/red"), .badArgs)
    }

    func test_reducer_nextOnScreenWithoutNext_isNoNext() {
        XCTAssertEqual(refusal(.next(data: nil), on: "/a/b:x/c", catalog: flow), .noNext)
        XCTAssertEqual(refusal(.next(data: "x"), on: "/c", catalog: flow), .noNext,
                       "no-next is judged before the data rule")
    }

    // MARK: - OPEN

    func test_reducer_open_replacesStackWithRoute() throws {
        XCTAssertEqual(try apply(.open(navigation("/green/blue:x")), on: "/red"), "/green/blue:x")
    }

    func test_reducer_openOfSameRoute_isNoOp() throws {
        XCTAssertNil(try apply(.open(navigation("/red")), on: "/red"))
        XCTAssertNil(try apply(.open(navigation("/red/blue:x")), on: "/red/blue:x"))
    }

    func test_reducer_openDifferingOnlyInData_isChange() throws {
        XCTAssertEqual(try apply(.open(navigation("/red/blue:y")), on: "/red/blue:x"), "/red/blue:y")
    }

    // MARK: - Revisions

    func test_reducer_revision_growsByExactlyOnePerChange() throws {
        var state = RoomState(stack: builtIn.initialStack, revision: 0)
        let steps: [Mutation] = [
            .select(entry("green")), .push(entry("blue", "hello world")), .pop, .next(data: nil),
            .select(entry("blue")), .root, .push(entry("red")), .push(entry("green")), .root,
            .open(navigation("/green/blue:x")), .open(navigation("/green/blue:x")), .pop, .pop,
        ]
        var changes: UInt64 = 0
        for mutation in steps {
            do {
                if let next = try Reducer.apply(mutation, to: state, catalog: builtIn, maxDepth: 64) {
                    XCTAssertEqual(next.revision, state.revision + 1, "\(mutation)")
                    state = next
                    changes += 1
                }
            } catch {
                XCTAssertEqual(error.code, .atRoot, "only the final POP should fail")
            }
        }
        XCTAssertEqual(state.revision, changes)
        XCTAssertEqual(state.route, "/green")
    }

    func test_reducer_noOpAndError_leaveRevisionAlone() {
        let state = RoomState(stack: stack("/red"), revision: 9)
        XCTAssertNil(try Reducer.apply(.root, to: state, catalog: builtIn, maxDepth: 64))
        XCTAssertThrowsError(try Reducer.apply(.pop, to: state, catalog: builtIn, maxDepth: 64))
        XCTAssertEqual(state.revision, 9)
    }

    // MARK: - Supporting values

    func test_mutation_op_isLowercaseVerb() {
        XCTAssertEqual(Mutation.select(entry("red")).op, "select")
        XCTAssertEqual(Mutation.push(entry("red")).op, "push")
        XCTAssertEqual(Mutation.pop.op, "pop")
        XCTAssertEqual(Mutation.root.op, "root")
        XCTAssertEqual(Mutation.next(data: nil).op, "next")
        XCTAssertEqual(Mutation.open([]).op, "open")
    }

    func test_catalog_builtIn_startsOnRed() {
        XCTAssertEqual(builtIn.initial, "red")
        XCTAssertEqual(builtIn.initialStack, [entry("red")])
        XCTAssertEqual(RoomState(stack: builtIn.initialStack, revision: 0).route, "/red")
        XCTAssertEqual(builtIn.screens.map(\.name), ["red", "green", "blue"])
        XCTAssertEqual(builtIn.screens.map(\.next), ["green", "blue", "red"])
        XCTAssertEqual(builtIn.screens.map(\.data), [.none, .none, .optional])
        XCTAssertEqual(builtIn.screens.map(\.color), [.red, .green, .blue])
        XCTAssertEqual(builtIn.screens.map(\.title), ["Red", "Green", "Blue"])
        XCTAssertNil(builtIn["purple"])
        XCTAssertEqual(builtIn["blue"]?.data, .optional)
    }

    func test_limits_defaults_matchContract() {
        let limits = Limits()
        XCTAssertEqual(limits.maxLineBytes, 4096)
        XCTAssertEqual(limits.maxPendingBytes, 1 << 20)
        XCTAssertEqual(limits.maxDepth, 64)
        XCTAssertEqual(limits.maxRooms, 1024)
        XCTAssertEqual(Limits.authAttemptsBeforeClose, 3)
    }

    // MARK: - Sheets

    func test_reducer_stackVerbs_leaveSheetsAsTheyAre() throws {
        XCTAssertEqual(try apply(.push(entry("green")), on: "/red#blue:n"), "/red/green#blue:n")
        XCTAssertEqual(try apply(.pop, on: "/red/green#blue#red"), "/red#blue#red")
        XCTAssertEqual(try apply(.root, on: "/red/green/blue#green"), "/red#green")
        XCTAssertEqual(try apply(.next(data: nil), on: "/red#blue"), "/green#blue",
                       "NEXT moves the stack's top, not the sheet's")
        XCTAssertEqual(refusal(.pop, on: "/red#blue"), .atRoot, "a sheet is not a stack entry to pop")
    }

    func test_reducer_stackVerbs_withoutSheets_behaveAsInVersion1() throws {
        XCTAssertEqual(try apply(.push(entry("green")), on: "/red"), "/red/green")
        XCTAssertEqual(try apply(.pop, on: "/red/green"), "/red")
        XCTAssertEqual(try apply(.root, on: "/red/green/blue"), "/red")
        XCTAssertEqual(try apply(.next(data: nil), on: "/red"), "/green")
    }

    func test_reducer_select_leavesNoSheet() throws {
        XCTAssertEqual(try apply(.select(entry("green")), on: "/red#blue#green"), "/green")
        XCTAssertEqual(try apply(.select(entry("red")), on: "/red#blue"), "/red",
                       "dropping the sheets alone is a change")
        XCTAssertNil(try apply(.select(entry("red")), on: "/red"))
    }

    func test_reducer_open_replacesStackAndSheets() throws {
        XCTAssertEqual(try apply(.open(navigation("/green#red")), on: "/red#blue"), "/green#red")
        XCTAssertEqual(try apply(.open(navigation("/red")), on: "/red#blue"), "/red")
        XCTAssertEqual(try apply(.open(navigation("/red#blue:x")), on: "/red"), "/red#blue:x")
        XCTAssertNil(try apply(.open(navigation("/red#blue:x")), on: "/red#blue:x"))
    }

    func test_reducer_present_putsASheetOnTop() throws {
        XCTAssertEqual(try apply(.present(entry("blue", "a note")), on: "/red"), "/red#blue:a%20note")
        XCTAssertEqual(try apply(.present(entry("red")), on: "/red/green#blue"), "/red/green#blue#red")
        XCTAssertEqual(try apply(.present(entry("red")), on: "/red#red"), "/red#red#red",
                       "the same screen twice is two sheets, a change")
    }

    func test_reducer_dismiss_removesTheTopSheetOnly() throws {
        XCTAssertEqual(try apply(.dismiss, on: "/red/green#blue#red"), "/red/green#blue")
        XCTAssertEqual(try apply(.dismiss, on: "/red#blue"), "/red")
        XCTAssertEqual(refusal(.dismiss, on: "/red/green"), .noSheet)
    }

    func test_reducer_depth_countsStackAndSheetsTogether() throws {
        XCTAssertEqual(refusal(.present(entry("red")), on: "/red/green#blue", maxDepth: 3), .limit)
        XCTAssertEqual(refusal(.push(entry("red")), on: "/red#green#blue", maxDepth: 3), .limit)
        XCTAssertEqual(try apply(.present(entry("red")), on: "/red#green", maxDepth: 3), "/red#green#red")
        XCTAssertEqual(try apply(.dismiss, on: "/red/green#blue", maxDepth: 3), "/red/green",
                       "removing is allowed at the limit")
    }

    func test_reducer_presentAndDismiss_opsAreTheirVerbs() {
        XCTAssertEqual(Mutation.present(entry("red")).op, "present")
        XCTAssertEqual(Mutation.dismiss.op, "dismiss")
    }

    // MARK: - A revision at its maximum (read from a state file or Redis)

    func test_reducer_changeAtMaximumRevision_isLimitAndLeavesTheRoom() {
        let top = RoomState(navigation("/red"), revision: .max)
        for mutation: Mutation in [.select(entry("green")), .push(entry("blue")), .open(navigation("/green")),
                                   .present(entry("blue"))] {
            XCTAssertThrowsError(try Reducer.apply(mutation, to: top, catalog: builtIn, maxDepth: 64), "\(mutation)") {
                let error = $0 as? ProtocolError
                XCTAssertEqual(error?.code, .limit)
                XCTAssertEqual(error?.message.contains("maximum"), true, error?.message ?? "")
            }
        }
    }

    func test_reducer_noOpAtMaximumRevision_staysANoOp() throws {
        let top = RoomState(navigation("/red"), revision: .max)
        XCTAssertNil(try Reducer.apply(.select(entry("red")), to: top, catalog: builtIn, maxDepth: 64))
        XCTAssertNil(try Reducer.apply(.root, to: top, catalog: builtIn, maxDepth: 64))
    }

    func test_reducer_changeJustBelowMaximum_reachesIt() throws {
        XCTAssertEqual(try apply(.select(entry("green")), on: "/red", revision: .max - 1), "/green")
    }

    func test_reducer_stateErrorsAtMaximumRevision_keepTheirOwnCode() {
        let top = RoomState(navigation("/red"), revision: .max)
        XCTAssertThrowsError(try Reducer.apply(.pop, to: top, catalog: builtIn, maxDepth: 64)) {
            XCTAssertEqual(($0 as? ProtocolError)?.code, .atRoot)
        }
    }
}
