import Foundation
import Strata
import StrataPostgreSQL
import StrataTesting
import Testing

extension DriverHarness {
    /// PostgreSQL stores on the process's throwaway server, one schema per fixture directory, so
    /// "reopen" finds the same store.
    static let postgreSQL = DriverHarness(name: "postgresql", storeType: .postgreSQL) { directory in
        // The tests start the server (PostgreSQLServer.shared()) before using the harness; a
        // missing server makes this nil, which the driver reports as a missing URL.
        (try? PostgreSQLTestServer.shared())?.url(schema: PostgreSQLServer.schema(for: directory))
    }
}

/// The shared test server, and schema names for fixture directories.
enum PostgreSQLServer {
    /// The process's server; fails the test with the reason when it cannot start.
    static func shared() throws -> PostgreSQLTestServer { try PostgreSQLTestServer.shared() }

    /// The schema of a fixture directory: the same directory gives the same schema.
    static func schema(for directory: URL) -> String {
        let name = directory.lastPathComponent.lowercased().map {
            $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_"
        }
        return "t_" + String(name.suffix(56))
    }
}

@Suite("PostgreSQL driver conformance")
struct PostgreSQLConformanceTests {
    @Test("conformance", arguments: ConformanceSuite.cases)
    func conformance(_ check: ConformanceCase) throws {
        _ = try PostgreSQLServer.shared()
        try check.run(.postgreSQL)
    }

    @Test(
        "contexts on four threads inserting, updating, deleting, refreshing, fetching and looking up by ID stay consistent with the store and leave no pin"
    )
    func concurrencyStress() throws {
        _ = try PostgreSQLServer.shared()
        let seed: UInt64 = 0x5EED_0021
        print("concurrency stress on postgresql: seed \(seed), 4 workers x 150 operations")
        let report = try ConcurrencyStress.run(.postgreSQL, seed: seed)
        print("concurrency stress on postgresql: \(report)")
        #expect(report.inserts > 0 && report.updates > 0 && report.deletes > 0)
    }

    @Test("two readers fetching every row while a writer saves each see one state of the store per fetch")
    func snapshotReads() throws {
        _ = try PostgreSQLServer.shared()
        print(
            "snapshot reads on postgresql: 2 readers, at least 12 fetches each and on while 12 saves of 1,500 rows run")
        let report = try ConcurrencyStress.snapshotReads(.postgreSQL)
        print("snapshot reads on postgresql: \(report)")
        #expect(report.fetches >= 24 && report.saves == 12)
        #expect(report.generationsSeen > 1, "the fetches ran while saves committed")
    }

    @Test(
        "a view context, four background writers and two child editors under load; afterwards every context agrees with the store"
    )
    func containerStress() throws {
        _ = try PostgreSQLServer.shared()
        let seed: UInt64 = 0x5EED_0022
        print("container stress on postgresql: seed \(seed), 6 workers x 60 operations")
        let report = try ContainerStress.run(.postgreSQL, seed: seed)
        print("container stress on postgresql: \(report)")
        #expect(report.saves > 0 && report.childSaves > 0 && report.viewFetches > 0)
    }
}
