import Testing

@testable import Strata

/// The row cache's count of reads in flight by removal number (C5).
@Suite("Reads in flight")
struct ReadsInFlightTests {
    @Test("reads begun at the same and at different removal numbers count, end one by one, and give the oldest")
    func beginsAndEnds() {
        var reads = ReadsInFlight()
        #expect(reads.isEmpty && reads.total == 0 && reads.oldest == nil)
        reads.begin(at: 7)
        reads.begin(at: 7)
        reads.begin(at: 9)
        reads.begin(at: 3)
        #expect(reads.total == 4)
        #expect(reads.oldest == 3)
        reads.end(at: 3)
        #expect(reads.oldest == 7, "the last read at 3 ended")
        reads.end(at: 7)
        #expect(reads.total == 2 && reads.oldest == 7, "one read at 7 is still in flight")
        reads.end(at: 7)
        #expect(reads.oldest == 9)
        reads.end(at: 9)
        #expect(reads.isEmpty && reads.total == 0 && reads.oldest == nil)
    }

    @Test("ending a number no read began at changes nothing")
    func unknownEnd() {
        var reads = ReadsInFlight()
        reads.begin(at: 5)
        reads.end(at: 4)
        reads.end(at: 6)
        #expect(reads.total == 1 && reads.oldest == 5)
    }
}
