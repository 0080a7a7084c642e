import CSQLite
import Foundation
import Strata

/// Opens SQLite stores (``StoreType/sqlite``).
///
/// A missing file is created with Core Data's layout for the request's model. An existing store is
/// matched against the model through its `Z_PRIMARYKEY` table (entities by name or renaming
/// identifier) and its columns; a store Apple's Core Data wrote, whose metadata has no Strata
/// version hashes yet, is checked column by column and refused with
/// ``StoreError/Code/modelMismatch`` listing the entities that differ.
public struct SQLiteDriverFactory: StoreDriverFactory {
    /// Creates the factory.
    public init() {}

    public func makeDriver(_ request: StoreOpenRequest) throws -> any StoreDriver {
        guard let url = request.url, url.isFileURL else {
            throw StoreError(
                .invalidRequest, "a SQLite store needs a file URL; pass one to addPersistentStore(type:at:)",
                store: request.url?.absoluteString)
        }
        let path = url.path
        let options = request.options
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists, options.isReadOnly || !options.createIfMissing {
            throw StoreError(
                .notFound, "there is no store file here; check the path, or allow creating it (createIfMissing)",
                store: path)
        }
        return try mappingErrors(store: path, action: "opening the store", timeout: options.timeout) {
            try open(path: path, request: request, creating: !exists)
        }
    }

    private func open(path: String, request: StoreOpenRequest, creating: Bool) throws -> SQLiteDriver {
        let options = request.options
        let writer: SQLiteConnection?
        if options.isReadOnly {
            writer = nil
        } else {
            let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
            connection.trace(to: request.log)
            connection.setBusyTimeout(options.timeout)
            try SQLiteFunctions.register(on: connection)
            writer = connection
        }
        let inspector = try writer ?? SQLiteConnection(path: path, mode: .readOnly)
        inspector.setBusyTimeout(options.timeout)
        let isNew = try !inspector.tableExists("Z_PRIMARYKEY")
        if isNew, try inspector.scalar("SELECT count(*) FROM sqlite_master")?.integer ?? 0 > 0 {
            throw StoreError(
                .corrupt,
                "the file is a SQLite database but not a Core Data store (no Z_PRIMARYKEY table); open it with the tool that wrote it",
                store: path)
        }
        if isNew, writer == nil {
            throw StoreError(
                .readOnly, "the store is empty and was opened read-only, so it cannot be created", store: path)
        }
        let layout: StoreLayout
        if isNew, let writer {
            try configure(writer, options: options, new: true)
            layout = StoreLayout(
                model: request.model, entities: request.entities,
                storeNumbers: Dictionary(
                    uniqueKeysWithValues: request.model.entities.map { ($0.entityNumber, $0.entityNumber) }),
                existingColumns: nil, existingTables: nil)
            try create(layout, on: writer)
        } else {
            if let writer { try configure(writer, options: options, new: false) }
            layout = try existingLayout(on: inspector, request: request)
        }
        let log = request.log
        let timeout = options.timeout
        let readerPragmas = try SQLiteDriver.readerPragmas.sorted(by: { $0.key < $1.key }).compactMap {
            name, fallback in try pragma(name, options: options, fallback: fallback, store: path)
        }
        let openReader: @Sendable () throws -> SQLiteConnection = {
            let reader = try SQLiteConnection(path: path, mode: .readOnly)
            reader.trace(to: log)
            reader.setBusyTimeout(timeout)
            try SQLiteFunctions.register(on: reader)
            for statement in readerPragmas { _ = try reader.rows(statement) }
            return reader
        }
        let reader = try openReader()
        if writer == nil { inspector.close() }
        return SQLiteDriver(
            path: path, layout: layout, readOnly: options.isReadOnly, timeout: options.timeout, writer: writer,
            reader: reader, openReader: openReader)
    }

    /// Applies the journal, synchronous and other pragmas to the write connection.
    private func configure(_ connection: SQLiteConnection, options: StoreOptions, new: Bool) throws {
        if new { try connection.execute("PRAGMA auto_vacuum = 2") }
        try connection.execute("PRAGMA foreign_keys = OFF")
        for (name, fallback) in SQLiteDriver.pragmaDefaults.sorted(by: { $0.key < $1.key }) {
            guard let statement = try pragma(name, options: options, fallback: fallback, store: connection.path)
            else { continue }
            _ = try connection.rows(statement)
        }
    }

    /// The statement setting pragma `name` to the store option of that name, or to `fallback`
    /// without one; `nil` when neither is given.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` when the option's value is not a single word
    ///   or number (it is spliced into the statement, so nothing else may pass).
    private func pragma(_ name: String, options: StoreOptions, fallback: String?, store: String) throws -> String? {
        guard let value = options.values[name] ?? fallback else { return nil }
        guard !value.isEmpty, value.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw StoreError(
                .invalidRequest, "store option '\(name)' has the value '\(value)', which is not a pragma value",
                store: store)
        }
        return "PRAGMA \(name) = \(value)"
    }

    private func create(_ layout: StoreLayout, on connection: SQLiteConnection) throws {
        try connection.execute("BEGIN IMMEDIATE")
        do {
            for statement in layout.creationStatements() { try connection.execute(statement) }
            let insert = try connection.prepare(
                "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)")
            for entity in layout.model.entities {
                let parent = entity.superentityName.flatMap { layout.model.entity(named: $0)?.entityNumber } ?? 0
                try insert.reset()
                try insert.bind([.integer(Int64(entity.entityNumber)), .text(entity.name), .integer(Int64(parent))])
                try insert.step()
            }
            try MetadataCoding.write(
                StoreMetadata(storeType: StoreType.sqliteName, values: MetadataCoding.initialValues(for: layout.model)),
                naming: layout.naming, to: connection)
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The layout of an existing store, checked against the model when Strata has not written it.
    private func existingLayout(on connection: SQLiteConnection, request: StoreOpenRequest) throws -> StoreLayout {
        let entries = try PrimaryKeyEntry.read(from: connection)
        var storeNumbers: [Int32: Int32] = [:]
        for entity in request.model.entities {
            let match =
                entries.first { $0.isModelEntity && $0.name == entity.name }
                ?? entries.first {
                    $0.isModelEntity && entity.renamingIdentifier != nil && $0.name == entity.renamingIdentifier
                }
            if let match { storeNumbers[entity.entityNumber] = match.entityNumber }
        }
        let tableNames = try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
            $0[0].text
        }
        var columns: [String: [String]] = [:]
        var types: [String: [String: String]] = [:]
        for table in tableNames where table.hasPrefix("Z") {
            let info = try connection.rows("SELECT name, type FROM pragma_table_info(?) ORDER BY cid", [.text(table)])
            columns[table] = info.compactMap { $0[0].text }
            types[table] = Dictionary(info.compactMap { row in row[0].text.map { ($0, row[1].text ?? "") } }) { a, _ in
                a
            }
        }
        let mapped = request.entities.filter { storeNumbers[$0.entityNumber] != nil }
        let stored = try MetadataCoding.readWithNaming(from: connection)
        let metadata = stored?.metadata
        let naming: LayoutNaming
        if let stored {
            guard let known = stored.naming else {
                throw StoreError(
                    .unsupported,
                    "the store names its tables and columns by rules of a newer Strata (\(LayoutNaming.metadataKey) \(stored.recorded ?? 0)); open it with that version of Strata",
                    store: connection.path)
            }
            naming = known
        } else {
            naming = .coreData
        }
        let layout = StoreLayout(
            model: request.model, entities: mapped, storeNumbers: storeNumbers, existingColumns: columns,
            existingTables: Set(tableNames), naming: naming)
        if metadata?.entityVersionHashes.isEmpty ?? true {
            var differing = layout.differingEntities(storeEntities: entries, columnTypes: types)
            let unmapped = request.entities.filter { storeNumbers[$0.entityNumber] == nil }.map(\.name)
            differing = Array(Set(differing + unmapped)).sorted()
            if !differing.isEmpty {
                throw StoreError(
                    .modelMismatch,
                    "the store was written with a different model; entities that differ: \(differing.joined(separator: ", ")). Open it with the model that wrote it, or without a model (read-only)",
                    store: connection.path)
            }
        }
        return layout
    }

    public func metadata(at url: URL, options: StoreOptions) throws -> StoreMetadata? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try mappingErrors(store: url.path, action: "reading metadata", timeout: options.timeout) {
            do {
                return try Self.readMetadata(at: url, mode: .readOnly, options: options)
            } catch let error as SQLiteError where error.isHotJournalOnReadOnlyConnection && !options.isReadOnly {
                // A crash left a transaction half-written (a hot -journal): only a connection that
                // may write rolls it back, restoring the last committed state, as the next open
                // of the store would. A caller that asked for read-only access gets the error.
                return try Self.readMetadata(at: url, mode: .readWrite, options: options)
            }
        }
    }

    private static func readMetadata(at url: URL, mode: SQLiteConnection.OpenMode, options: StoreOptions) throws
        -> StoreMetadata?
    {
        let connection = try SQLiteConnection(path: url.path, mode: mode)
        defer { connection.close() }
        connection.setBusyTimeout(options.timeout)
        return try MetadataCoding.read(from: connection)
    }

    /// SQLite's journal files beside the main file.
    static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// The main file, its write-ahead log and shared-memory index, and its rollback journal.
    public func storeFiles(at url: URL, options: StoreOptions) -> [URL] {
        [url] + Self.companionSuffixes.map { URL(fileURLWithPath: url.path + $0) }
    }

    /// Renames the new file over the old one once neither has a journal holding data.
    ///
    /// The new store must be closed (its write-ahead log checkpointed away). A destination whose
    /// `-wal` or `-journal` still holds data (a process that crashed with it open) is recovered
    /// first by checkpointing it; if another process has it open, that fails with `.locked` and
    /// nothing changes: the new file would otherwise meet the old store's journal. The old
    /// `-shm` stays: SQLite rebuilds it for the new file.
    public func replaceStore(at destination: URL, withStoreFrom source: URL, options: StoreOptions) throws {
        let target = try StoreFileOperations.resolvedPath(destination.path)
        for suffix in ["-wal", "-journal"] where Self.hasContent(source.path + suffix) {
            throw StoreError(
                .io,
                "the new store still has a non-empty \(suffix) file; close every connection to it before putting it in place",
                store: source.path)
        }
        if ["-wal", "-journal"].contains(where: { Self.hasContent(target + $0) }) {
            try mappingErrors(store: target, action: "recovering the store's journal", timeout: options.timeout) {
                let connection = try SQLiteConnection(path: target, mode: .readWrite)
                defer { connection.close() }
                connection.setBusyTimeout(options.timeout)
                _ = try connection.rows("PRAGMA wal_checkpoint(TRUNCATE)")
            }
            for suffix in ["-wal", "-journal"] where Self.hasContent(target + suffix) {
                throw StoreError(
                    .locked,
                    "the store's \(suffix) file still holds data: another process has the store open; close it and try again",
                    store: target)
            }
        }
        try StoreFileOperations.replace(target, with: source.path, companionSuffixes: Self.companionSuffixes)
    }

    private static func hasContent(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_size > 0
    }

    public func recoverModel(at url: URL, options: StoreOptions) throws -> Strata.RecoveredModel? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try mappingErrors(store: url.path, action: "recovering the store's model", timeout: options.timeout) {
            try StoreModelRecovery.recoverModel(fromStoreAt: url.path)
        }
    }
}

extension StoreType {
    /// The name SQLite stores record as their type (Core Data's `NSSQLiteStoreType`).
    public static let sqliteName = "SQLite"

    /// The SQLite store type (`NSSQLiteStoreType`), Core Data's file layout over libsqlite3.
    public static var sqlite: StoreType {
        let type = StoreType(name: sqliteName, factory: SQLiteDriverFactory())
        register(type)
        return type
    }
}
