import Foundation
import Logging
import Strata
import StrataTesting
import Testing

@testable import StrataPostgreSQL

/// The PostgreSQL driver logs the statements it sends through swift-log when asked (``StoreLog``),
/// as the SQLite driver does: statements at level 1, with their bound values at 2, with how long
/// each ran at 3.
@Suite("PostgreSQL store logging")
struct PostgreSQLLogTests {
    /// Saves an item holding `needle-4711` into a new store logged at `detail`, fetches it back by
    /// that string, and returns what was logged.
    static func saveAndFetch(_ label: String, detail: StoreLog.Detail) throws -> [(level: Logger.Level, text: String)] {
        let server = try PostgreSQLServer.shared()
        let url = server.url(schema: PostgreSQLTestServer.schemaName(label))
        let capture = LogCapture()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(
            type: .postgreSQL, at: url, options: StoreOptions(log: capture.storeLog(detail)))
        let context = ManagedObjectContext(coordinator: coordinator)
        let item = try context.insertNewObject(forEntityName: "Item")
        item["string"] = "needle-4711"
        item["int64"] = 4_711_000_000
        try context.save()
        let found = try context.fetch(
            FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "string == 'needle-4711'")))
        #expect(found.count == 1)
        return capture.lines
    }

    @Test("level 1 logs each statement at debug, without its bound values or durations")
    func statements() throws {
        let lines = try Self.saveAndFetch("log-statements", detail: .statements)
        #expect(lines.contains { $0.level == .debug && $0.text.contains("INSERT INTO") && $0.text.contains("ZITEM") })
        #expect(lines.contains { $0.level == .debug && $0.text.contains("SELECT") })
        #expect(lines.contains { $0.text.contains("COMMIT") })
        #expect(!lines.contains { $0.text.contains("needle-4711") }, "values are bound, not shown")
        #expect(!lines.contains { $0.text.contains(" took ") })
        #expect(lines.allSatisfy { $0.level == .debug })
    }

    @Test("level 2 shows the bound values at trace; level 3 adds how long each statement ran")
    func valuesAndTimings() throws {
        let values = try Self.saveAndFetch("log-values", detail: .values)
        #expect(
            values.contains {
                $0.level == .trace && $0.text.contains("INSERT") && $0.text.contains("'needle-4711'")
                    && $0.text.contains("4711000000")
            }, "\(values.map(\.text))")
        #expect(values.contains { $0.text.contains("SELECT") && $0.text.contains("$1 = ") })
        #expect(!values.contains { $0.text.contains(" took ") })

        let timed = try Self.saveAndFetch("log-timings", detail: .timings)
        #expect(timed.contains { $0.text.contains("INSERT") && $0.text.contains(" took ") && $0.text.hasSuffix(" ms") })
        #expect(timed.contains { $0.text.contains("'needle-4711'") })
    }

    @Test("with logging off nothing reaches the logger")
    func off() throws {
        #expect(try Self.saveAndFetch("log-off", detail: .off).isEmpty)
    }

    @Test("bound values read as SQL writes them: NULL, numbers, quoted text, bytes, UUIDs, arrays cut short")
    func renderedValues() {
        var parameters = PGParameters()
        parameters.appendNull(PGType.text)
        parameters.append(Int64(-42))
        parameters.append(int32: 7)
        parameters.append(2.5)
        parameters.append(true)
        parameters.append(text: "it's")
        parameters.append(bytes: Data([0xDE, 0xAD]))
        parameters.append(uuid: UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!)
        parameters.append(numeric: "12.5")
        parameters.appendArray(PGType.int8Array, elementType: PGType.int8, count: 12) { index, bytes in
            guard index != 1 else { return false }
            PGParameters.write(Int64(index), into: &bytes)
            return true
        }
        parameters.appendArray(PGType.textArray, elementType: PGType.text, count: 0) { _, _ in true }
        #expect(
            parameters.loggedValues
                == "$1 = NULL, $2 = -42, $3 = 7, $4 = 2.5, $5 = true, $6 = 'it''s', $7 = '\\xdead' (2 bytes), "
                + "$8 = '00112233-4455-6677-8899-aabbccddeeff', $9 = '12.5', "
                + "$10 = {0,NULL,2,3,4,5,6,7,8,9,… 2 more}, $11 = {}")
    }
}
