import Foundation
import Strata

/// What `strata migrate` is asked to do.
public struct MigrateOptions {
    /// The new model's file (`--model`).
    public var modelPath: String
    /// The model the store was written with (`--from-model`); found in the store when `nil`.
    public var fromModelPath: String?
    /// An Xcode mapping model (`--mapping`); inferred when `nil`.
    public var mappingPath: String?
    /// Plan and report only; write nothing (`--dry-run`).
    public var dryRun = false
    /// Keep a copy of the store before migrating it (`--backup`), at ``StoreMigrator/backupURL(for:)``.
    public var backup = false
    /// Called as rows are copied.
    public var progress: ((ConversionProgress) -> Void)?

    /// Creates options.
    public init(
        modelPath: String, fromModelPath: String? = nil, mappingPath: String? = nil, dryRun: Bool = false,
        backup: Bool = false,
        progress: ((ConversionProgress) -> Void)? = nil
    ) {
        self.modelPath = modelPath
        self.fromModelPath = fromModelPath
        self.mappingPath = mappingPath
        self.dryRun = dryRun
        self.backup = backup
        self.progress = progress
    }
}

/// What `strata migrate` did (or, for a dry run, would do).
public struct MigrateReport: Sendable {
    /// One entity mapping and the rows it reads.
    public struct Mapping: Sendable {
        public var name: String
        public var type: String
        public var source: String?
        public var destination: String?
        /// Rows of the source entity (its own rows, not its subentities'); `nil` without a source.
        public var sourceRows: Int?
        /// `property ← expression` for each property mapping with an expression.
        public var properties: [String]
        public var filter: String?
        public var policy: String?
    }

    /// The store.
    public var store: String
    /// Whether nothing was needed: the store already matches the model.
    public var upToDate: Bool
    /// Whether this was a dry run (nothing written).
    public var dryRun: Bool
    /// `inferred` or the mapping model's path.
    public var mappingSource: String
    /// Whether the migration is lightweight (rows copied by the plan, no policies).
    public var isLightweight: Bool
    /// Where the source model came from (`embedded`, `modelVersions`, `modelCache`, `given`).
    public var sourceModelOrigin: String
    /// The entity mappings, in the order they run.
    public var mappings: [Mapping]
    /// `inPlace` or `copyAndSwap` after a run; `nil` for a dry run.
    public var strategy: String?
    /// Rows per destination entity after a run.
    public var migratedRows: [String: Int]
    /// The backup's path, when one was made.
    public var backupPath: String?

    /// The report for people.
    public var lines: [String] {
        if upToDate { return ["\(store): already matches the model; nothing to migrate"] }
        var out = [
            "\(dryRun ? "Would migrate" : "Migrated") \(store) (\(isLightweight ? "lightweight" : "with objects and policies"), mapping \(mappingSource), source model \(sourceModelOrigin))"
        ]
        var table = TextTable(headers: ["mapping", "type", "source", "destination", "rows"], rightAligned: [4])
        for mapping in mappings {
            table.append([
                mapping.name, mapping.type, mapping.source ?? "-", mapping.destination ?? "-",
                mapping.sourceRows.map(String.init) ?? "-",
            ])
        }
        out += table.lines
        if dryRun {
            for mapping in mappings where !mapping.properties.isEmpty || mapping.filter != nil || mapping.policy != nil
            {
                out.append("\(mapping.name):")
                if let filter = mapping.filter { out.append("  filter \(filter)") }
                if let policy = mapping.policy { out.append("  policy \(policy)") }
                out += mapping.properties.map { "  \($0)" }
            }
            out.append("Dry run: nothing was written.")
        } else {
            if let strategy { out.append("Strategy: \(strategy)") }
            if !migratedRows.isEmpty {
                out.append(
                    "Rows now: "
                        + migratedRows.keys.sorted().map { "\($0) \(migratedRows[$0] ?? 0)" }.joined(separator: ", "))
            }
            if let backupPath { out.append("Backup: \(backupPath)") }
        }
        return out
    }

    /// The `migrate --json` document.
    public var json: JSONValue {
        .object([
            ("store", .string(store)), ("upToDate", .bool(upToDate)), ("dryRun", .bool(dryRun)),
            ("mapping", .string(mappingSource)), ("lightweight", .bool(isLightweight)),
            ("sourceModel", .string(sourceModelOrigin)),
            (
                "entityMappings",
                .array(
                    mappings.map {
                        .object([
                            ("name", .string($0.name)), ("type", .string($0.type)), ("source", .optional($0.source)),
                            ("destination", .optional($0.destination)),
                            ("sourceRows", $0.sourceRows.map(JSONValue.int) ?? .null),
                            ("filter", .optional($0.filter)), ("policy", .optional($0.policy)),
                            ("properties", .array($0.properties.map(JSONValue.string))),
                        ])
                    })
            ),
            ("strategy", .optional(strategy)),
            ("migratedRows", .object(migratedRows.keys.sorted().map { ($0, .int(migratedRows[$0] ?? 0)) })),
            ("backup", .optional(backupPath)),
        ])
    }
}

/// `strata migrate`: plans the migration of a store to a new model (inferred, or through an
/// Xcode mapping model) and runs it, or reports it without writing (dry run).
public enum StoreMigrator {
    /// Where `--backup` keeps the store: `<store>.backup` beside it.
    public static func backupURL(for url: URL) -> URL { URL(fileURLWithPath: url.path + ".backup") }

    /// Migrates (or, for a dry run, plans) the store at `location`.
    ///
    /// - Throws: ``ToolError``: usage for bad arguments (no store, an unreadable model or mapping
    ///   model), failure for a migration that cannot be planned or run (the store is left as it was).
    public static func migrate(_ location: StoreLocation, options: MigrateOptions) throws -> MigrateReport {
        guard let url = location.url, location.isFileBacked else {
            throw ToolError.usage(
                "'\(location.displayName)' is not a store file; strata migrate works on SQLite, XML and LMDB stores")
        }
        guard location.exists else { throw ToolError.usage("no store at '\(location.displayName)'") }
        let type = try location.storeType()
        let destination = try ModelFile.load(options.modelPath)
        let source = try options.fromModelPath.map(ModelFile.load)
        let mapping: MappingModel?
        do {
            mapping = try options.mappingPath.map { try XcodeMappingModel.read(at: URL(fileURLWithPath: $0)) }
        } catch let error as MigrationError {
            throw ToolError.usage("\(error)")
        }
        var storeOptions = StoreOptions()
        if options.backup, !options.dryRun {
            let backup = backupURL(for: url)
            if FileManager.default.fileExists(atPath: backup.path) {
                throw ToolError.usage(
                    "the backup location '\(backup.path)' already exists; move it away or migrate without --backup")
            }
            storeOptions.migration.backupURL = backup
        }
        // A dry run plans on a private copy of the store's files: even a read-only SQLite
        // connection leaves -wal and -shm files beside a WAL-mode store.
        var planURL = url
        var scratch: URL?
        if options.dryRun {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "strata-migrate-\(UUID().uuidString)")
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                planURL = folder.appendingPathComponent(url.lastPathComponent)
                scratch = folder
                try type.factory.copyStore(
                    from: url, to: planURL, options: StoreOptions(isReadOnly: true, createIfMissing: false))
            } catch {
                throw ToolError.failure(
                    "store '\(location.displayName)': a dry run reads a private copy of the store, which could not be made in \(folder.path) (\(error)); free space there or set TMPDIR"
                )
            }
        }
        // Only the private copy is removed; failing to remove it leaves a stray temporary file.
        defer { if let scratch { try? FileManager.default.removeItem(at: scratch) } }
        let planned: StoreMigration?
        do {
            planned = try StoreMigration.plan(
                storeAt: planURL, type: type, to: destination, options: storeOptions, sourceModel: source,
                mappingModel: mapping,
                infersMappingModel: mapping == nil, countsRows: true)
        } catch {
            throw wrapped(error, location)
        }
        guard let migration = planned else {
            return MigrateReport(
                store: location.displayName, upToDate: true, dryRun: options.dryRun,
                mappingSource: options.mappingPath ?? "inferred",
                isLightweight: true, sourceModelOrigin: "embedded", mappings: [], strategy: nil, migratedRows: [:],
                backupPath: nil)
        }
        if let mapping {
            do {
                try mapping.check(sourceModel: migration.sourceModel, destinationModel: destination)
            } catch let error as MigrationError {
                throw ToolError.usage(
                    "mapping model '\(options.mappingPath ?? "")': \(error.message): \(error.changes.joined(separator: "; "))"
                )
            }
        }
        var report = MigrateReport(
            store: location.displayName, upToDate: false, dryRun: options.dryRun,
            mappingSource: options.mappingPath ?? "inferred",
            isLightweight: migration.isLightweight, sourceModelOrigin: migration.sourceModelOrigin.rawValue,
            mappings: migration.mappingModel.entityMappings.map { describe($0, rows: migration.rowCounts) },
            strategy: nil,
            migratedRows: [:], backupPath: nil)
        if options.dryRun { return report }
        let progress = options.progress
        let outcome: StoreMigration.Outcome
        do {
            outcome = try migration.run(
                progress: progress.map { report in
                    { step in
                        guard step.phase == .copying || step.phase == .objects || step.phase == .inPlace else { return }
                        report(
                            ConversionProgress(
                                entity: step.entity ?? step.phase.rawValue, entityCopied: step.completed,
                                entityTotal: step.total,
                                copied: step.completed, total: step.total))
                    }
                })
        } catch {
            throw wrapped(error, location)
        }
        report.strategy = outcome.strategy.rawValue
        report.migratedRows = outcome.rowCounts
        report.backupPath = outcome.backupURL?.path
        return report
    }

    static func describe(_ mapping: EntityMapping, rows: [String: Int]) -> MigrateReport.Mapping {
        let properties = (mapping.attributeMappings + mapping.relationshipMappings).compactMap { property in
            property.valueExpression.map { "\(property.name) ← \($0)" }
        }
        return MigrateReport.Mapping(
            name: mapping.name, type: mapping.effectiveType.description, source: mapping.sourceEntityName,
            destination: mapping.destinationEntityName, sourceRows: mapping.sourceEntityName.map { rows[$0] ?? 0 },
            properties: properties, filter: mapping.filterPredicate.map { "\($0)" },
            policy: mapping.entityMigrationPolicyClassName)
    }

    static func wrapped(_ error: any Error, _ location: StoreLocation) -> ToolError {
        if let error = error as? MigrationError {
            var text = "\(error)"
            if error.store == nil { text = "store '\(location.displayName)': " + text }
            return ToolError.failure(text)
        }
        return ToolError.wrapping(error, store: location.displayName)
    }
}
