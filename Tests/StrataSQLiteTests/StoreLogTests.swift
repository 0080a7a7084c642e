import Foundation
import Logging
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// Drivers log what they do to their engine through swift-log when asked (StoreLog).
@Suite("Store logging")
struct StoreLogTests {
    static func save(_ log: StoreLog, in directory: TemporaryDirectory) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(
            type: .sqlite, at: directory.file("logged.sqlite"), options: StoreOptions(log: log))
        let context = ManagedObjectContext(coordinator: coordinator)
        let item = try context.insertNewObject(forEntityName: "Item")
        item["string"] = "needle-4711"
        try context.save()
        _ = try context.fetch(
            FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "string == 'needle-4711'")))
    }

    @Test("STRATA_SQL_DEBUG values map to levels; anything that is not a number is off")
    func environmentValues() {
        #expect(StoreLog.Detail(environmentValue: nil) == .off)
        #expect(StoreLog.Detail(environmentValue: "") == .off)
        #expect(StoreLog.Detail(environmentValue: "0") == .off)
        #expect(StoreLog.Detail(environmentValue: "1") == .statements)
        #expect(StoreLog.Detail(environmentValue: " 2 ") == .values)
        #expect(StoreLog.Detail(environmentValue: "3") == .timings)
        #expect(StoreLog.Detail(environmentValue: "9") == .timings)
        #expect(StoreLog.Detail(environmentValue: "-1") == .off)
        #expect(StoreLog.Detail(environmentValue: "yes") == .off)
    }

    @Test("level 1 logs each SQL statement at debug, without its bound values")
    func statements() throws {
        let directory = try TemporaryDirectory(prefix: "store-log")
        let capture = LogCapture()
        try Self.save(capture.storeLog(.statements), in: directory)
        let lines = capture.lines
        #expect(lines.contains { $0.level == .debug && $0.text.contains("INSERT INTO") && $0.text.contains("ZITEM") })
        #expect(lines.contains { $0.text.contains("SELECT") })
        #expect(
            !lines.contains { $0.text.contains("needle-4711") && $0.text.contains("INSERT") },
            "values are bound, not shown")
        #expect(!lines.contains { $0.text.contains(" took ") })
    }

    @Test("level 2 fills in bound values, level 3 adds how long each statement ran")
    func valuesAndTimings() throws {
        let directory = try TemporaryDirectory(prefix: "store-log")
        let withValues = LogCapture()
        try Self.save(withValues.storeLog(.values), in: directory)
        #expect(
            withValues.lines.contains {
                $0.level == .trace && $0.text.contains("INSERT") && $0.text.contains("needle-4711")
            })
        #expect(!withValues.lines.contains { $0.text.contains(" took ") })

        let other = try TemporaryDirectory(prefix: "store-log")
        let timed = LogCapture()
        try Self.save(timed.storeLog(.timings), in: other)
        #expect(
            timed.lines.contains {
                $0.text.contains("INSERT") && $0.text.contains(" took ") && $0.text.hasSuffix(" ms")
            })
    }

    @Test("with logging off nothing reaches the logger")
    func off() throws {
        let directory = try TemporaryDirectory(prefix: "store-log")
        let capture = LogCapture()
        try Self.save(capture.storeLog(.off), in: directory)
        #expect(capture.lines.isEmpty)
    }
}
