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

    @Test("migration", arguments: ConformanceSuite.migrationCases)
    func migration(_ check: ConformanceCase) throws {
        try check.run(.lmdb)
    }

    @Test("name collisions", arguments: ConformanceSuite.nameCollisionCases)
    func nameCollisions(_ check: ConformanceCase) throws {
        try check.run(.lmdb)
    }

    @Test(
        "contexts on four threads inserting, updating, deleting, refreshing, fetching and looking up by ID stay consistent with the store and leave no pin"
    )
    func concurrencyStress() throws {
        let seed: UInt64 = 0x5EED_0016
        print("concurrency stress on lmdb: seed \(seed), 4 workers x 150 operations")
        let report = try ConcurrencyStress.run(.lmdb, seed: seed)
        print("concurrency stress on lmdb: \(report)")
        #expect(report.inserts > 0 && report.updates > 0 && report.deletes > 0)
    }

    @Test("two readers fetching every row while a writer saves each see one state of the store per fetch")
    func snapshotReads() throws {
        print("snapshot reads on lmdb: 2 readers, at least 12 fetches each and on while 12 saves of 1,500 rows run")
        let report = try ConcurrencyStress.snapshotReads(.lmdb)
        print("snapshot reads on lmdb: \(report)")
        #expect(report.fetches >= 24 && report.saves == 12)
        #expect(report.generationsSeen > 1, "the fetches ran while saves committed")
    }

    @Test(
        "a view context, four background writers and two child editors under load; afterwards every context agrees with the store"
    )
    func containerStress() throws {
        let seed: UInt64 = 0x5EED_0018
        print("container stress on lmdb: seed \(seed), 6 workers x 60 operations")
        let report = try ContainerStress.run(.lmdb, seed: seed)
        print("container stress on lmdb: \(report)")
        #expect(report.saves > 0 && report.childSaves > 0 && report.viewFetches > 0)
    }
}
