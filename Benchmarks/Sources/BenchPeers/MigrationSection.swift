import CSQLiteBench
import Foundation
import Strata
import StrataTools

/// The migration figures: (a) a lightweight migration adding an optional attribute to `Item` in a
/// SQLite store of N rows, against the same change by hand through the sqlite3 C API
/// (`ALTER TABLE ADD COLUMN` and the new metadata in one transaction), each on a fresh copy of
/// the store; and (b) the peak resident set of a copying migration (LMDB, rows copied into a new
/// store beside the old one and swapped in) at two store sizes, each in a child process of its own.
public struct MigrationSectionResult: Codable, Sendable {
    /// Rows of the SQLite store (a).
    public var rows: Int
    /// The migration through Strata (plan and run), and by hand (ms per round).
    public var strataAddColumnMs: [Double] = [], rawAddColumnMs: [Double] = []
    /// How Strata ran it (`inPlace` expected) and whether the store file kept its inode (no copy).
    public var addColumnStrategy = ""
    public var addColumnKeptFile = false
    /// (b): the copying migration's driver, and per store size (rows) its time and peak resident bytes.
    public var copyDriver = "LMDB"
    public var copyMs: [Int: Double] = [:]
    public var copyPeakBytes: [Int: Int64] = [:]
    /// The largest anonymous part of the resident set seen at a batch (the heap, without the
    /// store files' mapped pages).
    public var copyAnonymousPeakBytes: [Int: Int64] = [:]
    public var copyStrategy = ""
    /// (c), information: the same copying migration of a SQLite store (forced to copy by an added
    /// entity that renumbers the others), per store size: time, peak and anonymous peak resident
    /// bytes. `nil` in results saved before it was measured.
    public var sqliteCopyMs: [Int: Double]?
    public var sqliteCopyPeakBytes: [Int: Int64]?
    public var sqliteCopyAnonymousPeakBytes: [Int: Int64]?

    /// The median of `values`.
    public static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    public init(rows: Int) { self.rows = rows }
}

/// Runs the migration workloads (see ``MigrationSectionResult``).
public enum MigrationSection {
    /// The benchmark model with `Item.note`, an optional string, added.
    public static func modelWithNote() throws -> ManagedObjectModel {
        let base = try BenchModel.make()
        return try ManagedObjectModel(
            entities: base.entities.map { entity in
                EntityDescription(
                    entity.name, parent: entity.superentityName,
                    properties: entity.ownProperties + (entity.name == "Item" ? [.attribute("note", .string)] : []))
            })
    }

    /// The benchmark model with `Item.email` renamed `address` and `Item.age` widened to 64 bits:
    /// a change SQLite would rebuild the table for, here copied row by row.
    public static func modelRebuilt() throws -> ManagedObjectModel {
        let base = try BenchModel.make()
        return try ManagedObjectModel(
            entities: base.entities.map { entity in
                guard entity.name == "Item" else {
                    return EntityDescription(
                        entity.name, parent: entity.superentityName, properties: entity.ownProperties)
                }
                return EntityDescription(
                    entity.name,
                    properties: entity.ownProperties.map { property in
                        switch property.name {
                        case "email":
                            var address = AttributeDescription("address", .string, isOptional: false)
                            address.renamingIdentifier = "email"
                            return .attribute(address)
                        case "age": return .attribute("age", .integer64, isOptional: false)
                        default: return property
                        }
                    })
            })
    }

    /// ``modelRebuilt()`` with an entity `AAAStamp` added: it sorts before the others, so their
    /// entity numbers change and SQLite cannot migrate in place; it copies, as LMDB does.
    public static func modelRenumbered() throws -> ManagedObjectModel {
        let rebuilt = try modelRebuilt()
        return try ManagedObjectModel(
            entities: [EntityDescription("AAAStamp", properties: [.attribute("label", .string)])]
                + rebuilt.entities.map {
                    EntityDescription($0.name, parent: $0.superentityName, properties: $0.ownProperties)
                })
    }

    /// Writes a store of `rows` items with the benchmark model through the driver (100,000 per
    /// change set) and closes it; returns its URL.
    public static func build(_ kind: KnownDriver, rows: Int, in directory: URL) throws -> URL {
        guard let contender = try DriverBenchContender(kind: kind), let name = kind.fileName else {
            throw BenchError("the \(kind.rawValue) driver is not linked")
        }
        try contender.open(in: directory)
        do {
            var start = 0
            while start < rows {
                let end = min(start + 100_000, rows)
                // The rows of one chunk only, so building a large store stays small in memory.
                var chunk: [BenchRow] = []
                chunk.reserveCapacity(end - start)
                for index in start..<end {
                    let id = Int64(index + 1)
                    let age = Int32(index % 90)
                    let score = Double(index) * 0.5
                    let created = Date(timeIntervalSinceReferenceDate: Double(index))
                    chunk.append(
                        BenchRow(
                            id: id, name: "name \(index)", email: "user\(index)@example.com", age: age, score: score,
                            created: created))
                }
                _ = try contender.insert(chunk[...])
                start = end
            }
        }
        try contender.close()
        return directory.appendingPathComponent(name)
    }

    /// (a): Strata's in-place migration against raw SQL, `rounds` times each on fresh copies of
    /// a SQLite store of `rows` items.
    public static func addColumn(rows: Int, rounds: Int, in directory: URL, log: (String) -> Void) throws
        -> MigrationSectionResult
    {
        guard let sqlite = KnownDriver.sqlite.storeType else { throw BenchError("the SQLite driver is not linked") }
        var result = MigrationSectionResult(rows: rows)
        let built = directory.appendingPathComponent("built")
        try FileManager.default.createDirectory(at: built, withIntermediateDirectories: true)
        log("  building a SQLite store of \(rows) items")
        let original = try build(.sqlite, rows: rows, in: built)
        let model = try modelWithNote()
        let copy = directory.appendingPathComponent("migrated.sqlite")
        func fresh() throws {
            try sqlite.factory.destroyStore(at: copy, options: StoreOptions())
            try FileManager.default.copyItem(at: original, to: copy)
        }
        // The metadata Strata writes, which the raw contender writes too.
        var newMetadata = Data()
        for round in 0..<rounds {
            try fresh()
            let inode = try inodeNumber(copy.path)
            let (outcome, ms) = try BenchClock.measure { () throws -> StoreMigration.Outcome in
                guard let migration = try StoreMigration.plan(storeAt: copy, type: sqlite, to: model) else {
                    throw BenchError("the store needs no migration")
                }
                return try migration.run()
            }
            result.strataAddColumnMs.append(ms)
            result.addColumnStrategy = outcome.strategy.rawValue
            result.addColumnKeptFile = try inodeNumber(copy.path) == inode
            if round == 0 { newMetadata = try metadataBlob(copy.path) }
            log("  strata round \(round + 1): \(String(format: "%.2f", ms)) ms (\(outcome.strategy.rawValue))")
        }
        for round in 0..<rounds {
            try fresh()
            let ms = try BenchClock.measure { try rawAddColumn(copy.path, metadata: newMetadata) }.1
            result.rawAddColumnMs.append(ms)
            log("  raw SQL round \(round + 1): \(String(format: "%.2f", ms)) ms")
        }
        try sqlite.factory.destroyStore(at: copy, options: StoreOptions())
        return result
    }

    /// The same change by hand: open, one transaction adding the column and writing the new
    /// metadata, close.
    static func rawAddColumn(_ path: String, metadata: Data) throws {
        let db = try RawSQLite(path: path)
        try db.exec("BEGIN IMMEDIATE")
        try db.exec("ALTER TABLE ZITEM ADD COLUMN ZNOTE VARCHAR")
        let update = try db.prepare("UPDATE Z_METADATA SET Z_PLIST = ?")
        _ = metadata.withUnsafeBytes { bytes in
            sqlite3_bind_blob(
                update.handle, 1, bytes.baseAddress, Int32(bytes.count),
                unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        }
        try update.run()
        try db.exec("COMMIT")
    }

    static func metadataBlob(_ path: String) throws -> Data {
        let db = try RawSQLite(path: path)
        let select = try db.prepare("SELECT Z_PLIST FROM Z_METADATA")
        guard try select.step(), let bytes = sqlite3_column_blob(select.handle, 0) else {
            throw BenchError("no Z_METADATA row")
        }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(select.handle, 0)))
    }

    static func inodeNumber(_ path: String) throws -> UInt64 {
        var status = stat()
        guard stat(path, &status) == 0 else { throw BenchError("cannot stat \(path)") }
        return UInt64(status.st_ino)
    }

    /// (b), in the child: migrates the LMDB store at `store` to ``modelRebuilt()`` by copying, or
    /// (c) the SQLite store (a `.sqlite` file) to ``modelRenumbered()``; returns the time (ms) and
    /// the strategy.
    /// `anonymousPeak` is the largest anonymous (heap) part of the resident set seen at a
    /// progress report (each batch), which leaves out the store files' mapped pages.
    public static func copyInChild(store: URL) throws -> (ms: Double, strategy: String, anonymousPeak: Int64) {
        let driver: KnownDriver = store.pathExtension == "sqlite" ? .sqlite : .lmdb
        guard let type = driver.storeType else { throw BenchError("the \(driver.title) driver is not linked") }
        let model = try driver == .sqlite ? modelRenumbered() : modelRebuilt()
        var anonymousPeak: Int64 = 0
        let (outcome, ms) = try BenchClock.measure { () throws -> StoreMigration.Outcome in
            guard
                let migration = try StoreMigration.plan(
                    storeAt: store, type: type, to: model, options: driver.storeOptions)
            else { throw BenchError("the store needs no migration") }
            return try migration.run { _ in anonymousPeak = max(anonymousPeak, residentAnonymousBytes()) }
        }
        return (ms, outcome.strategy.rawValue, anonymousPeak)
    }

    /// `RssAnon` of /proc/self/status, in bytes (0 when unreadable).
    static func residentAnonymousBytes() -> Int64 {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
            let kilobytes = Int64(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }
}
