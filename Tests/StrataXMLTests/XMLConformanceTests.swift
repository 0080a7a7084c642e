import Foundation
import Strata
import StrataTesting
import StrataXML
import Testing

extension DriverHarness {
    /// XML stores in a file of the test's temporary directory, so "reopen" reads the same file.
    static let xml = DriverHarness(name: "xml", storeType: .xml) { directory in
        directory.appendingPathComponent("store.xml")
    }
}

@Suite("XML driver conformance")
struct XMLConformanceTests {
    @Test("conformance", arguments: ConformanceSuite.cases)
    func conformance(_ check: ConformanceCase) throws {
        try check.run(.xml)
    }

    @Test("contexts on four threads inserting, updating, deleting, refreshing and fetching stay consistent with the store")
    func concurrencyStress() throws {
        let seed: UInt64 = 0x5EED_0016
        print("concurrency stress on xml: seed \(seed), 4 workers x 150 operations")
        let report = try ConcurrencyStress.run(.xml, seed: seed)
        print("concurrency stress on xml: \(report)")
        #expect(report.inserts > 0 && report.updates > 0 && report.deletes > 0)
    }
}
