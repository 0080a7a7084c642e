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
}
