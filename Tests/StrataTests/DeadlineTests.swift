import Foundation
import StrataTesting
import Testing

@Suite("Deadline: a time limit on the work itself")
struct DeadlineTests {
    @Test("work that finishes in time returns its value, and its error reaches the caller")
    func inTime() throws {
        #expect(try Deadline.run(seconds: 30, "adding") { 2 + 3 } == 5)
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try Deadline.run(seconds: 30, "refusing") { () throws -> Int in throw Refused() }
        }
    }

    @Test("work that outlasts its deadline is reported as a hang, naming the work")
    func late() {
        let started = ContinuousClock.now
        #expect {
            try Deadline.run(seconds: 0.2, "sleeping") { () -> Int in
                Thread.sleep(forTimeInterval: 3)
                return 1
            }
        } throws: { error in
            (error as? DeadlineExceeded)?.description == "sleeping did not finish within 0.2 s: it hangs"
        }
        #expect(ContinuousClock.now - started < .seconds(2.5), "the caller did not wait for the work")
    }
}
