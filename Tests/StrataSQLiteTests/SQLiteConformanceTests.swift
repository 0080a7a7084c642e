import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

extension DriverHarness {
    /// SQLite stores in the fixture's temporary directory, so "reopen" finds the same file.
    static let sqlite = DriverHarness(name: "sqlite", storeType: .sqlite) { directory in
        directory.appendingPathComponent("Conformance.sqlite")
    }
}

@Suite("SQLite driver conformance")
struct SQLiteConformanceTests {
    @Test("conformance", arguments: ConformanceSuite.cases)
    func conformance(_ check: ConformanceCase) throws {
        try check.run(.sqlite)
    }
}
