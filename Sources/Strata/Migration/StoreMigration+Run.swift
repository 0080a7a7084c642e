import Foundation
import Logging

extension StoreMigration {
    /// How a migration ran.
    public enum Strategy: String, Sendable, Hashable {
        /// The driver migrated the store in place, in one transaction.
        case inPlace
        /// Rows were copied into a new store, which took the old one's place.
        case copy
        /// Objects were migrated through the mapping's policies into a new store, which took the
        /// old one's place.
        case objects
    }

    /// What a migration did.
    public struct Outcome: Sendable {
        /// How it ran.
        public var strategy: Strategy
        /// Rows (or objects) of each destination entity after the migration, when counted.
        public var rowCounts: [String: Int]
        /// Where the copy of the old store was kept, when one was asked for.
        public var backupURL: URL?
        /// Where a backup of this store that was already at ``backupURL`` (left by a killed
        /// migration, or by an earlier one) was moved, or `nil` when there was none.
        public var previousBackupURL: URL?
    }

    /// Where migrations say what a user should know of, such as a backup moved aside.
    static let logger = Logger(label: "strata.migration")

    /// Runs the migration.
    ///
    /// - Parameter progress: Called as the work advances, on the calling thread.
    /// - Returns: How it ran.
    /// - Throws: ``MigrationError`` for rows the new model refuses (nothing is changed), a policy
    ///   that fails, too little disk space; ``StoreError`` for the drivers' failures. The store is
    ///   then exactly as it was.
    @discardableResult
    public func run(progress: ((MigrationProgress) -> Void)? = nil) throws -> Outcome {
        let name = displayName
        do {
            Self.removeStaleTemporaries(of: url, type: type, options: options)
            let size = StoreFileOperations.size(of: type.factory.storeFiles(at: url, options: options).map(\.path))
            let previousBackup = try backupURL.flatMap { try backUp(to: $0, size: size) }
            if let plan, try migrateInPlace(plan, progress: progress) {
                progress?(MigrationProgress(phase: .finished, completed: 1, total: 1))
                return Outcome(
                    strategy: .inPlace, rowCounts: destinationCounts(plan), backupURL: backupURL,
                    previousBackupURL: previousBackup)
            }
            try checkSpace(for: size, what: "a copy of the store")
            let outcome = try replacingWithCopy(progress: progress) { temporary in
                if let plan { return (Strategy.copy, try copyRows(plan, to: temporary, progress: progress)) }
                let manager = MigrationManager(sourceModel: sourceModel, destinationModel: destinationModel)
                manager.progressHandler = progress
                var sourceOptions = options
                sourceOptions.isReadOnly = true
                try manager.migrateStore(
                    from: url, type: type, options: sourceOptions, mapping: mappingModel, to: temporary, type: type,
                    options: writableOptions,
                    metadata: StoreMigration.migratedMetadata(sourceMetadata, from: sourceModel, to: destinationModel))
                return (Strategy.objects, manager.destinationCounts)
            }
            progress?(MigrationProgress(phase: .finished, completed: 1, total: 1))
            return Outcome(
                strategy: outcome.0, rowCounts: outcome.1, backupURL: backupURL, previousBackupURL: previousBackup)
        } catch let error as MigrationError {
            throw error.naming(store: name)
        }
    }

    var displayName: String { url.isFileURL ? url.path : url.absoluteString }

    /// The options a new or migrated store is opened with.
    var writableOptions: StoreOptions {
        var writable = options
        writable.isReadOnly = false
        writable.createIfMissing = true
        writable.shouldMigrateStoreAutomatically = false
        return writable
    }

    private func destinationCounts(_ plan: StoreMigrationPlan) -> [String: Int] {
        var counts: [String: Int] = [:]
        for entityPlan in plan.entities {
            counts[entityPlan.destination.name, default: 0] += rowCounts[entityPlan.source.name] ?? 0
        }
        for entity in plan.addedEntities { counts[entity.name] = counts[entity.name] ?? 0 }
        return counts
    }

    /// Removes the temporary stores (and their companion files) that migrations of the store at
    /// `url` left behind when they were killed: also those of a migration killed after it put the
    /// new store in place, which an open with nothing left to migrate clears
    /// (``PersistentStoreCoordinator/addPersistentStore(type:configuration:at:options:)``).
    static func removeStaleTemporaries(of url: URL, type: StoreType, options: StoreOptions) {
        guard url.isFileURL else { return }
        for path in StoreFileOperations.staleTemporaryPaths(beside: url.path, tag: temporaryTag) {
            // A leftover that cannot be removed is hidden and harmless; the migration goes on.
            try? type.factory.destroyStore(at: URL(fileURLWithPath: path), options: options)
        }
    }

    private func checkSpace(for bytes: Int64, what: String) throws {
        guard url.isFileURL, let free = StoreFileOperations.freeBytes(near: url.path) else { return }
        let needed = bytes + bytes / 10 + (1 << 20)
        guard free >= needed else {
            throw MigrationError(
                .insufficientSpace,
                "\(what) needs about \(needed / 1_048_576 + 1) MB beside the store, but only \(free / 1_048_576) MB are free; free some space and migrate again"
            )
        }
    }

    /// Copies the store to `backup` (the driver's copy is written under a hidden name and renamed
    /// into place, so a backup there is always whole); returns where a backup of this store that
    /// was already there went (``setAsidePreviousBackup(at:)``).
    private func backUp(to backup: URL, size: Int64) throws -> URL? {
        var previous: URL?
        if backup.isFileURL, FileManager.default.fileExists(atPath: backup.path) {
            previous = try setAsidePreviousBackup(at: backup)
        }
        try checkSpace(for: size, what: "the backup")
        try type.factory.copyStore(from: url, to: backup, options: options)
        return previous
    }

    /// Moves a backup of this store found at `backup` aside, beside it, and returns its new place.
    ///
    /// A migration killed after its backup was taken leaves that backup behind, and so does every
    /// finished migration; with a fixed backup location the next migration meets it. It may be
    /// the only good copy there is, so it is never overwritten or removed: a store with this
    /// store's identifier is renamed `NAME.taken-DATE.EXT` (the date its file was last written)
    /// in one rename by its driver, and a warning says where it went.
    ///
    /// - Throws: ``MigrationError`` `backupLocationTaken` when what is there is not a store with
    ///   this store's identifier (another store, another file, a store that cannot be read), or
    ///   cannot be moved; nothing is changed then.
    private func setAsidePreviousBackup(at backup: URL) throws -> URL {
        var reading = options
        reading.isReadOnly = true
        reading.createIfMissing = false
        reading.shouldMigrateStoreAutomatically = false
        let found: StoreMetadata?
        do {
            found = try type.factory.metadata(at: backup, options: reading)
        } catch {
            throw MigrationError(
                .backupLocationTaken,
                "the backup location \(backup.path) holds something that is not a readable \(type.name) store (\(error)); move it away or choose another backup location, then migrate again"
            )
        }
        guard let found, found.uuid == sourceMetadata.uuid else {
            throw MigrationError(
                .backupLocationTaken,
                "the backup location \(backup.path) holds \(found == nil ? "something that is not a store" : "another store (identifier \(found?.uuid ?? ""))"), not a backup of this one; move it away or choose another backup location, then migrate again"
            )
        }
        let aside = URL(fileURLWithPath: Self.setAsidePath(for: backup.path))
        do {
            try type.factory.replaceStore(at: aside, withStoreFrom: backup, options: options)
        } catch {
            throw MigrationError(
                .backupLocationTaken,
                "a backup of this store left by an earlier migration is at \(backup.path) and could not be moved aside (\(error)); move it away yourself (it may be the only copy of the store as it was), then migrate again"
            )
        }
        Self.logger.warning(
            "a backup of this store left by an earlier migration (one that was killed, or one to an earlier version) was at the backup location; it was moved to \(aside.path), and a new backup is taken. Keep it until the migrated store is known to be good, then remove it",
            metadata: ["store": "\(displayName)", "backup": "\(backup.path)", "previousBackup": "\(aside.path)"])
        return aside
    }

    /// `DIR/NAME.taken-DATE.EXT` for `DIR/NAME.EXT` (`-2`, `-3`, … added while that is taken), the
    /// date being when the file at `path` was last written, in UTC.
    static func setAsidePath(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        // Only the new name depends on it: a date that cannot be read gives today's.
        let written = try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let stem = url.deletingPathExtension().lastPathComponent + ".taken-" + formatter.string(from: written ?? Date())
        let suffix = url.pathExtension.isEmpty ? "" : "." + url.pathExtension
        let folder = url.deletingLastPathComponent()
        var candidate = folder.appendingPathComponent(stem + suffix).path
        var number = 2
        while FileManager.default.fileExists(atPath: candidate) {
            candidate = folder.appendingPathComponent("\(stem)-\(number)\(suffix)").path
            number += 1
        }
        return candidate
    }

    /// Asks the driver to run the plan in place.
    private func migrateInPlace(_ plan: StoreMigrationPlan, progress: ((MigrationProgress) -> Void)?) throws -> Bool {
        var writable = options
        writable.isReadOnly = false
        writable.createIfMissing = false
        let driver = try type.factory.makeDriver(
            StoreOpenRequest(url: url, model: sourceModel, configuration: nil, options: writable))
        progress?(MigrationProgress(phase: .inPlace, completed: 0, total: 1))
        do {
            let done = try driver.migrateInPlace(plan)
            try driver.close()
            return done
        } catch {
            try? driver.close()  // the migration's error is the one to report
            throw error
        }
    }

    /// Copies the rows into the new store at `temporary`.
    private func copyRows(_ plan: StoreMigrationPlan, to temporary: URL, progress: ((MigrationProgress) -> Void)?)
        throws
        -> [String: Int]
    {
        var reading = options
        reading.isReadOnly = true
        reading.createIfMissing = false
        let source = try type.factory.makeDriver(
            StoreOpenRequest(url: url, model: sourceModel, configuration: nil, options: reading))
        defer { try? source.close() }  // read-only: closing cannot lose anything
        let destination = try type.factory.makeDriver(
            StoreOpenRequest(url: temporary, model: destinationModel, configuration: nil, options: writableOptions))
        do {
            var copier = RowCopier(plan: plan, source: source, destination: destination)
            copier.totals = rowCounts
            copier.progress = progress
            let counts = try copier.run()
            try destination.close()
            return counts
        } catch {
            try? destination.close()  // the copy's error is the one to report; the new store is removed
            throw error
        }
    }

    /// Writes a new store beside the old one with `body`, then puts it in the old one's place;
    /// removes it when anything fails.
    private func replacingWithCopy<T>(progress: ((MigrationProgress) -> Void)?, _ body: (URL) throws -> T) throws -> T {
        let temporary: URL
        if url.isFileURL {
            temporary = URL(
                fileURLWithPath: try StoreFileOperations.temporaryPath(beside: url.path, tag: Self.temporaryTag))
        } else {
            temporary = URL(string: url.absoluteString + ".\(Self.temporaryTag)-\(UUID().uuidString)") ?? url
        }
        do {
            let result = try body(temporary)
            progress?(MigrationProgress(phase: .replacing, completed: 0, total: 1))
            try type.factory.replaceStore(at: url, withStoreFrom: temporary, options: options)
            return result
        } catch {
            // The new store is incomplete or was not put in place; the old one is untouched.
            try? type.factory.destroyStore(at: temporary, options: options)
            throw error
        }
    }
}
