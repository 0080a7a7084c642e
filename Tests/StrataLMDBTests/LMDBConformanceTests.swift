import Foundation
import Strata
import StrataLMDB
import StrataTesting
import Testing

extension DriverHarness {
    /// LMDB stores as one file in the test's directory.
    static let lmdb = DriverHarness(name: "lmdb", storeType: .lmdb) { directory in
        directory.appendingPathComponent("store.lmdb")
    }
}

@Suite("LMDB driver conformance")
struct LMDBConformanceTests {
    @Test("conformance", arguments: ConformanceSuite.cases)
    func conformance(_ check: ConformanceCase) throws {
        try check.run(.lmdb)
    }
}
