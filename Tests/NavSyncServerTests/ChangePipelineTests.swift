import XCTest
import NavSyncCore
@testable import NavSyncServer

/// The ordering rules of one session's changes, without a server: the test
/// plays both the server (taking tickets, sending answers) and the store
/// (answering in whatever order it likes).
final class ChangePipelineTests: XCTestCase {
    private let session = Session(id: 1, connection: MemoryConnection(), grant: .unrestricted,
                                  maxLineBytes: 1024, liveCount: LiveCount())
    private var pipeline = ChangePipeline()
    /// Tickets in the order their answers went out.
    private var answered: [UInt64] = []

    /// Hands a change to the "store", which takes it behind the others when `storePipelines`.
    @discardableResult
    private func submit(storePipelines: Bool = true) -> ChangeRequest {
        let change = ChangeRequest(room: "main", mutation: .select(RouteEntry(screen: "green")), ifRevision: nil,
                                   session: session, ticket: pipeline.nextTicket)
        XCTAssertEqual(pipeline.takeTicket(), change.ticket)
        pipeline.submitted(nextChangeMayFollow: !pipeline.isInFlight(ticket: change.ticket) || storePipelines)
        return change
    }

    /// The store answers `change`; answers go out as the server sends them.
    private func storeAnswers(_ change: ChangeRequest) {
        if pipeline.storeAnswered(change) {
            answered.append(change.ticket)
            while let (next, _) = pipeline.answerSent() { answered.append(next.ticket) }
        } else {
            pipeline.holdEarly(change, .unchanged(revision: 0))
        }
        pipeline.settle()
    }

    func test_changePipeline_answersGoOutInTicketOrder_whateverOrderTheStoreAnswers() {
        let orders: [[Int]] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
        for order in orders {
            pipeline = ChangePipeline()
            answered = []
            let changes = (0..<3).map { _ in submit() }
            XCTAssertFalse(pipeline.waitingForStore, "a pipelining store takes the next change at once")
            var answeredByStore: Set<Int> = []
            for index in order {
                storeAnswers(changes[index])
                answeredByStore.insert(index)
                // Out go exactly the answers from the oldest ticket on with no gap before them.
                let due = (0..<3).prefix(while: { answeredByStore.contains($0) }).map(UInt64.init)
                XCTAssertEqual(answered, due, "store order \(order)")
            }
            XCTAssertEqual(answered, [0, 1, 2], "store order \(order)")
            XCTAssertTrue(pipeline.isIdle)
        }
    }

    func test_changePipeline_commandThatIsNotAChange_waitsBehindChangesInFlight() {
        let change = submit()
        let select = Command.mutate(.select(RouteEntry(screen: "blue")), ifRevision: nil)
        XCTAssertTrue(pipeline.mayRunBesideChangesInFlight(select, storeIsAvailable: true))
        XCTAssertFalse(pipeline.mayRunBesideChangesInFlight(.get, storeIsAvailable: true))
        XCTAssertFalse(pipeline.mayRunBesideChangesInFlight(.ping(text: "x"), storeIsAvailable: true))

        pipeline.holdBehindChanges(.get)
        XCTAssertTrue(pipeline.waitingForStore)
        XCTAssertFalse(pipeline.mayRunBesideChangesInFlight(select, storeIsAvailable: true),
                       "a change read after the waiting command must not overtake it")
        XCTAssertNil(pipeline.takeCommandBehindChanges(), "it waits while the change is in flight")

        storeAnswers(change)
        XCTAssertEqual(answered, [0])
        XCTAssertEqual(pipeline.takeCommandBehindChanges(), .get)
        XCTAssertNil(pipeline.takeCommandBehindChanges())
        XCTAssertTrue(pipeline.isIdle)
    }

    func test_changePipeline_storeThatDoesNotPipeline_holdsTheNextLines() {
        let change = submit(storePipelines: false)
        XCTAssertTrue(pipeline.waitingForStore)
        XCTAssertFalse(pipeline.mayRunBesideChangesInFlight(.mutate(.pop, ifRevision: nil), storeIsAvailable: true))
        storeAnswers(change)
        XCTAssertFalse(pipeline.waitingForStore)
        XCTAssertFalse(pipeline.nextChangeMayFollow, "the next change asks the store afresh")
    }

    func test_changePipeline_changeAnsweredInsideSubmit_letsTheNextFollow() {
        let change = ChangeRequest(room: "main", mutation: .pop, ifRevision: nil, session: session,
                                   ticket: pipeline.nextTicket)
        _ = pipeline.takeTicket()
        storeAnswers(change)
        XCTAssertFalse(pipeline.isInFlight(ticket: change.ticket))
        pipeline.submitted(nextChangeMayFollow: !pipeline.isInFlight(ticket: change.ticket))
        XCTAssertTrue(pipeline.isIdle)
        XCTAssertEqual(answered, [0])
    }

    func test_changePipeline_tooManyChangesInFlight_orAStoreDown_holdTheNextChange() {
        var changes: [ChangeRequest] = []
        for _ in 0..<(ChangePipeline.maxChangesInFlight - 1) { changes.append(submit()) }
        let pop = Command.mutate(.pop, ifRevision: nil)
        XCTAssertFalse(pipeline.waitingForStore)
        XCTAssertTrue(pipeline.mayRunBesideChangesInFlight(pop, storeIsAvailable: true))
        XCTAssertFalse(pipeline.mayRunBesideChangesInFlight(pop, storeIsAvailable: false))
        changes.append(submit())
        XCTAssertTrue(pipeline.waitingForStore, "at the cap the session's lines wait")
        XCTAssertFalse(pipeline.mayRunBesideChangesInFlight(pop, storeIsAvailable: true))
        storeAnswers(changes[0])
        XCTAssertFalse(pipeline.waitingForStore, "one answered, one more may go")
    }
}
