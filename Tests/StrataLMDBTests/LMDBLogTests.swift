import Foundation
import Strata
import StrataLMDB
import StrataTesting
import Testing

@Suite("LMDB store logging")
struct LMDBLogTests {
    static func save(_ log: StoreLog, in directory: TemporaryDirectory) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: .lmdb, at: directory.file("logged.lmdb"), options: StoreOptions(log: log))
        let context = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<3 {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["int64"] = index
        }
        try context.save()
    }

    @Test("each save is logged with its size, and with its duration at the timings level; nothing when off")
    func savesAreLogged() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-log")
        let statements = LogCapture()
        try Self.save(statements.storeLog(.statements), in: directory)
        #expect(statements.lines.contains { $0.level == .debug && $0.text.contains("3 inserts, 0 updates, 0 deletes") }, "\(statements.lines.map(\.text))")
        #expect(!statements.lines.contains { $0.text.contains(" took ") })

        let other = try TemporaryDirectory(prefix: "lmdb-log")
        let timed = LogCapture()
        try Self.save(timed.storeLog(.timings), in: other)
        #expect(timed.lines.contains { $0.text.contains("3 inserts") && $0.text.contains(" took ") })

        let third = try TemporaryDirectory(prefix: "lmdb-log")
        let silent = LogCapture()
        try Self.save(silent.storeLog(.off), in: third)
        #expect(silent.lines.isEmpty)
    }
}
