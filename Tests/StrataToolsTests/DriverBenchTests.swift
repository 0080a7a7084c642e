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

    @Test("a contender made with a durability opens its store with those options and is named after them")
    func durabilityReachesTheDriver() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("driver-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let bad = BenchDurability(name: "sometimes", values: ["sync": "sometimes"], settings: "not a mode")
        let good = BenchDurability(name: "nometasync", values: ["sync": "meta"], settings: "no meta-page sync")
        let contenders: [(any BenchContender, any BenchContender, String)] = [
            (
                try #require(try StrataBenchContender(kind: .lmdb, durability: bad)),
                try #require(try StrataBenchContender(kind: .lmdb, durability: good)), "strata-lmdb"
            ),
            (
                try #require(try DriverBenchContender(kind: .lmdb, durability: bad)),
                try #require(try DriverBenchContender(kind: .lmdb, durability: good)), "driver-lmdb"
            ),
        ]
        let dataset = BenchDataset(rows: Self.rows)
        for (index, (refused, opened, base)) in contenders.enumerated() {
            #expect(refused.id == "\(base)-sometimes")
            #expect(opened.id == "\(base)-nometasync")
            #expect(opened.settings.hasPrefix("no meta-page sync"))
            // The LMDB driver refuses a sync mode it does not know: the values reached it.
            let refusedDirectory = work.appendingPathComponent("refused-\(index)")
            try FileManager.default.createDirectory(at: refusedDirectory, withIntermediateDirectories: true)
            #expect(throws: StoreError.self) { try refused.open(in: refusedDirectory) }
            let openedDirectory = work.appendingPathComponent("opened-\(index)")
            try FileManager.default.createDirectory(at: openedDirectory, withIntermediateDirectories: true)
            try opened.open(in: openedDirectory)
            #expect(try opened.insert(dataset.rows[...]).rows == Self.rows)
            #expect(try opened.fetchAll() == dataset.expectedFetchAll)
            try opened.close()
        }
    }

    @Test("a durability's values are set over the driver kind's benchmark options")
    func durabilityOptions() {
        let full = BenchDurability(name: "syncfull", values: ["synchronous": "FULL"], settings: "")
        #expect(KnownDriver.sqlite.storeOptions(nil).values == ["journal_mode": "WAL", "synchronous": "NORMAL"])
        #expect(KnownDriver.sqlite.storeOptions(full).values == ["journal_mode": "WAL", "synchronous": "FULL"])
        #expect(KnownDriver.lmdb.storeOptions(nil).values == ["sync": "full"])
    }
}
