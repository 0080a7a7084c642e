import Foundation
import StrataTesting
import Testing

/// Random predicates (``PredicateGenerator``) through the SQLite driver's SQL translation, in a
/// child process, against the in-memory evaluator on the same rows.
@Suite("Predicate translation fuzzing")
struct PredicateTranslationFuzzTests {
    @Test("SQL translation gives exactly the evaluator's rows wherever the driver applies a predicate")
    func sqlite() throws {
        try FuzzHarness.run("predicate-sql", seed: 0x5017_0004, cases: 2_000)
    }
}
