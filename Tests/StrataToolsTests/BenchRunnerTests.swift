import Foundation
import Strata
import StrataTools
import Testing

@Suite("strata bench runner")
struct BenchRunnerTests {
    /// The smallest size: every workload runs, and the runner's own checks compare every row
    /// count and checksum with the dataset.
    static let rows = 200

    @Test("every workload runs on the in-memory driver and touches the rows the dataset expects")
    func everyWorkloadRuns() throws {
        let report = try StrataBench.run(drivers: [.memory], rows: Self.rows, rounds: 2)
        let result = try #require(report.contender("strata-memory"))
        #expect(result.measurements.map(\.workload) == BenchWorkload.allCases)
        let dataset = BenchDataset(rows: Self.rows)
        func rows(_ w: BenchWorkload) -> Int? { result.measurement(w)?.rows }
        #expect(rows(.insert) == Self.rows)
        #expect(rows(.fetchAll) == Self.rows)
        #expect(rows(.lookupCold) == min(10_000, Self.rows))
        #expect(rows(.lookupWarm) == min(10_000, Self.rows))
        #expect(rows(.filtered) == dataset.filteredRows.count)
        #expect(rows(.update) == Self.rows)
        #expect(rows(.delete) == Self.rows)
        #expect(rows(.graphFaulting) == 10_000)
        #expect(rows(.graphPrefetch) == 10_000)
        #expect(rows(.saveFew) == 10)
        #expect(rows(.saveFewSmall) == 10)
        #expect(rows(.fetchAllAny) == Self.rows)
        #expect(result.measurement(.fetchAll)?.checksum == dataset.expectedFetchAll.checksum)
        #expect(result.measurement(.fetchAllAny)?.checksum == dataset.expectedFetchAll.checksum)
        #expect(result.measurement(.filtered)?.checksum == dataset.expectedFiltered.checksum)
        for m in result.measurements { #expect(m.samplesMs.count == 2) }
    }

    @Test("two passes of one contender pool their samples; another contender's results or different data are refused")
    func pooledPasses() throws {
        let first = try #require(
            try StrataBench.run(drivers: [.memory], rows: Self.rows, rounds: 2).contender("strata-memory"))
        let second = try #require(
            try StrataBench.run(drivers: [.memory], rows: Self.rows, rounds: 3).contender("strata-memory"))
        let pooled = try first.pooled(with: second)
        #expect(pooled.rounds == 5)
        for (index, m) in pooled.measurements.enumerated() {
            #expect(m.samplesMs == first.measurements[index].samplesMs + second.measurements[index].samplesMs)
        }
        var renamed = second
        renamed.id = "strata-other"
        #expect(throws: BenchError.self) { try first.pooled(with: renamed) }
        var changed = second
        changed.measurements[1].checksum &+= 1
        #expect(throws: BenchError.self) { try first.pooled(with: changed) }
    }

    @Test("about a tenth of the dataset falls in W4's age range, and the dataset is the same every time")
    func datasetShape() {
        let a = BenchDataset(rows: 10_000)
        let b = BenchDataset(rows: 10_000)
        #expect(a.rows == b.rows)
        #expect(a.lookupIDs == b.lookupIDs)
        let share = Double(a.filteredRows.count) / Double(a.rows.count)
        #expect(share > 0.08 && share < 0.12)
        #expect(Set(a.rows.map(\.name)).count == a.rows.count)
        #expect(a.changeSets.allSatisfy { $0.count == 10 && $0.allSatisfy { $0 <= 1_000 } })
    }

    @Test("the JSON has rows and one result per driver and workload with a median in milliseconds")
    func jsonShape() throws {
        let report = try StrataBench.run(drivers: [.memory], rows: Self.rows, rounds: 1)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(report.flatJSON().utf8)) as? [String: Any])
        #expect(object["rows"] as? Int == Self.rows)
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(results.count == BenchWorkload.allCases.count)
        #expect(Set(results.compactMap { $0["workload"] as? String }) == Set(BenchWorkload.allCases.map(\.rawValue)))
        for result in results {
            #expect(result["driver"] as? String == "memory")
            #expect((result["medianMs"] as? Double).map { $0 >= 0 } == true)
        }
    }

    @Test("every file driver is linked and runs every workload with the right answers")
    func everyDriverRuns() throws {
        #expect(KnownDriver.allCases.allSatisfy { $0.storeType != nil })
        let report = try StrataBench.run(drivers: [.sqlite, .xml, .lmdb], rows: Self.rows, rounds: 1)
        #expect(report.skipped.isEmpty)
        #expect(report.contenders.map(\.id) == ["strata-sqlite", "strata-xml", "strata-lmdb"])
        for contender in report.contenders {
            #expect(Set(contender.measurements.map(\.workload)) == Set(BenchWorkload.allCases), "\(contender.id)")
        }
    }

    @Test("a driver list with an unknown name is refused with the known names")
    func unknownDriver() throws {
        guard case .failure(let error) = KnownDriver.parseList("sqlite,oracle") else {
            Issue.record("oracle was accepted")
            return
        }
        #expect(error.message.contains("oracle"))
        #expect(error.message.contains("lmdb") && error.message.contains("postgres"))
        #expect(try KnownDriver.parseList("SQLite, memory").get() == [.sqlite, .memory])
    }

    @Test("strata bench --json prints the report and exits 0; bad --rows is a usage error")
    func benchBinary() throws {
        let result = try runStrata(["bench", "--drivers", "memory", "--rows", "1000", "--rounds", "1", "--json"])
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["rows"] as? Int == 1_000)
        let bad = try runStrata(["bench", "--rows", "5"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--rows"))
    }
}
