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

    @Test("name collisions", arguments: ConformanceSuite.nameCollisionCases)
    func nameCollisions(_ check: ConformanceCase) throws {
        try check.run(.xml)
    }

    @Test("migration", arguments: ConformanceSuite.migrationCases)
    func migration(_ check: ConformanceCase) throws {
        try check.run(.xml)
    }

    @Test(
        "contexts on four threads inserting, updating, deleting, refreshing, fetching and looking up by ID stay consistent with the store and leave no pin"
    )
    func concurrencyStress() throws {
        let seed: UInt64 = 0x5EED_0016
        print("concurrency stress on xml: seed \(seed), 4 workers x 150 operations")
        let report = try ConcurrencyStress.run(.xml, seed: seed)
        print("concurrency stress on xml: \(report)")
        #expect(report.inserts > 0 && report.updates > 0 && report.deletes > 0)
    }

    @Test("two readers fetching every row while a writer saves each see one state of the store per fetch")
    func snapshotReads() throws {
        print("snapshot reads on xml: 2 readers, at least 12 fetches each and on while 12 saves of 1,500 rows run")
        let report = try ConcurrencyStress.snapshotReads(.xml)
        print("snapshot reads on xml: \(report)")
        #expect(report.fetches >= 24 && report.saves == 12)
        #expect(report.generationsSeen > 1, "the fetches ran while saves committed")
    }

    @Test(
        "a view context, four background writers and two child editors under load; afterwards every context agrees with the store"
    )
    func containerStress() throws {
        let seed: UInt64 = 0x5EED_0018
        print("container stress on xml: seed \(seed), 6 workers x 60 operations")
        let report = try ContainerStress.run(.xml, seed: seed)
        print("container stress on xml: \(report)")
        #expect(report.saves > 0 && report.childSaves > 0 && report.viewFetches > 0)
    }
}
