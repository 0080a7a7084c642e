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

    @Test("migration", arguments: ConformanceSuite.migrationCases)
    func migration(_ check: ConformanceCase) throws {
        try check.run(.inMemory)
    }

    @Test("name collisions", arguments: ConformanceSuite.nameCollisionCases)
    func nameCollisions(_ check: ConformanceCase) throws {
        try check.run(.inMemory)
    }

    @Test(
        "contexts on four threads inserting, updating, deleting, refreshing, fetching and looking up by ID stay consistent with the store and leave no pin"
    )
    func concurrencyStress() throws {
        let seed: UInt64 = 0x5EED_0016
        print("concurrency stress on inMemory: seed \(seed), 4 workers x 150 operations")
        let report = try ConcurrencyStress.run(.inMemory, seed: seed)
        print("concurrency stress on inMemory: \(report)")
        #expect(report.inserts > 0 && report.updates > 0 && report.deletes > 0)
    }

    @Test("two readers fetching every row while a writer saves each see one state of the store per fetch")
    func snapshotReads() throws {
        print(
            "snapshot reads on in-memory: 2 readers, at least 12 fetches each and on while 12 saves of 1,500 rows run")
        let report = try ConcurrencyStress.snapshotReads(.inMemory)
        print("snapshot reads on in-memory: \(report)")
        #expect(report.fetches >= 24 && report.saves == 12)
        #expect(report.generationsSeen > 1, "the fetches ran while saves committed")
    }

    @Test(
        "a view context, four background writers and two child editors under load; afterwards every context agrees with the store"
    )
    func containerStress() throws {
        let seed: UInt64 = 0x5EED_0018
        print("container stress on inMemory: seed \(seed), 6 workers x 60 operations")
        let report = try ContainerStress.run(.inMemory, seed: seed)
        print("container stress on inMemory: \(report)")
        #expect(report.saves > 0 && report.childSaves > 0 && report.viewFetches > 0)
    }
}
