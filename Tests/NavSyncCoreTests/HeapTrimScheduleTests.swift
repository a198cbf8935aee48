import NavSyncCore
import XCTest

final class HeapTrimScheduleTests: XCTestCase {
    func testSchedule_waitsForTheMinimumBeforeAskingForATrim() {
        var schedule = HeapTrimSchedule(quietMilliseconds: 100, longestDelayMilliseconds: 2_000, minimumChanges: 3)
        XCTAssertNil(schedule.connectionChanged(at: 1_000))
        XCTAssertNil(schedule.connectionChanged(at: 1_001))
        XCTAssertEqual(schedule.connectionChanged(at: 1_002), 100)
    }

    func testSchedule_eachChangeAsksForAQuietPeriodFromNow() {
        var schedule = HeapTrimSchedule(quietMilliseconds: 100, longestDelayMilliseconds: 2_000, minimumChanges: 1)
        XCTAssertEqual(schedule.connectionChanged(at: 0), 100)
        XCTAssertEqual(schedule.connectionChanged(at: 50), 100)
        XCTAssertEqual(schedule.connectionChanged(at: 1_000), 100)
    }

    func testSchedule_aSteadyTrickleIsTrimmedNoLaterThanTheLongestDelay() {
        var schedule = HeapTrimSchedule(quietMilliseconds: 100, longestDelayMilliseconds: 2_000, minimumChanges: 1)
        XCTAssertEqual(schedule.connectionChanged(at: 10), 100)
        // The deadline is 2,010: the delay shrinks towards it, then is due at once.
        XCTAssertEqual(schedule.connectionChanged(at: 1_950), 60)
        XCTAssertEqual(schedule.connectionChanged(at: 2_010), 0)
        XCTAssertEqual(schedule.connectionChanged(at: 2_500), 0)
    }

    func testSchedule_aTrimStartsTheCountAndTheDeadlineAfresh() {
        var schedule = HeapTrimSchedule(quietMilliseconds: 100, longestDelayMilliseconds: 2_000, minimumChanges: 2)
        XCTAssertNil(schedule.connectionChanged(at: 0))
        XCTAssertEqual(schedule.connectionChanged(at: 3_000), 0)
        schedule.trimmed(at: 3_000)
        XCTAssertNil(schedule.connectionChanged(at: 4_100))
        XCTAssertEqual(schedule.connectionChanged(at: 4_200), 100)
    }

    func testSchedule_burstsPacedJustApart_areTrimmedAtMostOncePerInterval() {
        var schedule = HeapTrimSchedule(quietMilliseconds: 100, longestDelayMilliseconds: 2_000,
                                        minimumIntervalMilliseconds: 1_000, minimumChanges: 2)
        XCTAssertNil(schedule.connectionChanged(at: 0))
        XCTAssertEqual(schedule.connectionChanged(at: 1), 100)
        schedule.trimmed(at: 101)
        // Another burst 100 ms later: the trim waits for the interval, not the quiet period.
        XCTAssertNil(schedule.connectionChanged(at: 201))
        XCTAssertEqual(schedule.connectionChanged(at: 202), 899)
        // Past the interval, the quiet period rules again.
        schedule.trimmed(at: 1_101)
        XCTAssertNil(schedule.connectionChanged(at: 2_500))
        XCTAssertEqual(schedule.connectionChanged(at: 2_501), 100)
    }

    func testSchedule_defaultsTrimAfterABurstNotAfterAFewConnections() {
        var schedule = HeapTrimSchedule()
        for now in 0..<UInt64(schedule.minimumChanges - 1) {
            XCTAssertNil(schedule.connectionChanged(at: now))
        }
        XCTAssertEqual(schedule.connectionChanged(at: 20), schedule.quietMilliseconds)
    }
}
