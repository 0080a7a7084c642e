import Foundation
import Strata
import StrataTesting
import StrataTools
import Testing

@Suite("driver-level bench contender")
struct DriverBenchTests {
    static let rows = 200

    @Test(
        "the driver-level contender runs every workload on every driver with the dataset's answers",
        arguments: KnownDriver.allCases)
    func everyWorkloadOnEveryDriver(kind: KnownDriver) throws {
        if kind == .postgres { KnownDriver.usePostgresServer(try PostgreSQLTestServer.shared().url(schema: "public")) }
        let contender = try #require(try DriverBenchContender(kind: kind))
        #expect(contender.id == "driver-\(kind.rawValue)")
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("driver-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        let dataset = BenchDataset(rows: Self.rows)
        // The runner itself compares every row count and checksum with the dataset and throws on a mismatch.
        let result = try BenchRunner(dataset: dataset, rounds: 1, workDirectory: work).run(contender)
        // Rows have no key-value reads below the object layer: W2-any is Strata's alone.
        #expect(result.measurements.map(\.workload) == BenchWorkload.allCases.filter { $0 != .fetchAllAny })
        func rows(_ w: BenchWorkload) -> Int? { result.measurement(w)?.rows }
        #expect(rows(.insert) == Self.rows)
        #expect(rows(.fetchAll) == Self.rows)
        #expect(rows(.lookupCold) == dataset.lookupIDs.count)
        #expect(rows(.lookupWarm) == dataset.lookupIDs.count)
        #expect(rows(.filtered) == dataset.filteredRows.count)
        #expect(rows(.update) == Self.rows)
        #expect(rows(.delete) == Self.rows)
        #expect(rows(.saveFew) == 10)
        #expect(rows(.saveFewSmall) == 10)
        #expect(rows(.graphFaulting) == dataset.parents * dataset.childrenPerParent)
        #expect(rows(.graphPrefetch) == dataset.parents * dataset.childrenPerParent)
        #expect(result.measurement(.fetchAll)?.checksum == dataset.expectedFetchAll.checksum)
        #expect(result.measurement(.lookupCold)?.checksum == dataset.expectedLookups.checksum)
        #expect(result.measurement(.filtered)?.checksum == dataset.expectedFiltered.checksum)
        #expect(result.measurement(.graphPrefetch)?.checksum == dataset.expectedGraphWalk.checksum)
    }

    @Test("strata bench runs PostgreSQL on the server it is given, and skips it with the reason without one")
    func postgresBench() throws {
        KnownDriver.usePostgresServer(try PostgreSQLTestServer.shared().url(schema: "public"))
        let report = try StrataBench.run(drivers: [.postgres], rows: Self.rows, rounds: 1)
        #expect(report.contenders.map(\.id) == ["strata-postgres"])
        #expect(Set(report.contenders.first?.measurements.map(\.workload) ?? []) == Set(BenchWorkload.allCases))
    }

    @Test("the driver-level contender's store holds the updated rows after W5 when reopened")
    func updatesAreStored() throws {
        let contender = try #require(try DriverBenchContender(kind: .sqlite))
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("driver-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let dataset = BenchDataset(rows: Self.rows)
        try contender.open(in: work)
        _ = try contender.insert(dataset.rows[...])
        #expect(try contender.updateAll().rows == Self.rows)
        try contender.close()
        try contender.open(in: work)
        let after = try contender.fetchAll()
        let expected = dataset.rows.reduce(Int64(0)) { sum, row in
            var changed = row
            changed.score += 1
            return sum &+ BenchChecksum.row(changed)
        }
        #expect(after.rows == Self.rows)
        #expect(after.checksum == expected)
        try contender.close()
    }
}
