import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

extension DriverHarness {
    /// In-memory stores named by their directory, so "reopen" finds the same rows.
    static let inMemory = DriverHarness(name: "in-memory", storeType: .inMemory) { directory in
        URL(string: "memory://\(directory.lastPathComponent)")
    }
}

@Suite("In-memory driver conformance")
struct InMemoryConformanceTests {
    @Test("conformance", arguments: ConformanceSuite.cases)
    func conformance(_ check: ConformanceCase) throws {
        try check.run(.inMemory)
    }
}
