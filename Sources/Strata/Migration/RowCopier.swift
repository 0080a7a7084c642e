import Foundation

/// Copies the rows of a store into a new store through the driver protocol, as a
/// ``StoreMigrationPlan`` says: each source entity's rows are scanned in key order
/// (``StoreDriver/scanRows(_:_:)``), transformed (``StoreMigrationPlan/transform(_:with:)``) and
/// inserted with their keys, one change set per batch (one for the whole store when the
/// destination keeps its graph in memory anyway, so an XML file is written once).
///
/// Memory: one batch of rows, plus the constrained values of the uniqueness constraints the plan
/// must check (``StoreMigrationPlan/constraintsToCheck``).
struct RowCopier {
    let plan: StoreMigrationPlan
    let source: any StoreDriver
    let destination: any StoreDriver
    var batchSize = 2_000
    /// Rows of each source entity, for progress (`nil`: not known).
    var totals: [String: Int] = [:]
    var progress: ((MigrationProgress) -> Void)?

    /// Copies every row; returns the rows written per destination entity.
    ///
    /// - Throws: ``MigrationError`` for rows the new model refuses, or the drivers' ``StoreError``s.
    func run() throws -> [String: Int] {
        try destination.saveMetadata(plan.metadata)
        var unique = UniquenessCheck(plan: plan)
        var written: [String: Int] = [:]
        var maxKeys: [Int32: Int64] = [:]
        let total = totals.values.reduce(0, +)
        var done = 0
        let gathersAll = destination.capabilities.contains(.inMemory)
        var gathered = ChangeBatch()
        for entityPlan in plan.entities {
            let root = entityPlan.destination.rootEntityNumber
            var count = 0
            try source.scanRows(RowScan(entity: entityPlan.source, batchSize: batchSize)) { rows in
                var batch = ChangeBatch()
                batch.inserts.reserveCapacity(rows.count)
                for row in rows {
                    let migrated = try plan.transform(row, with: entityPlan)
                    try unique.add(migrated, of: entityPlan.destination)
                    batch.inserts.append(migrated)
                    maxKeys[root] = max(maxKeys[root] ?? 0, row.id.primaryKey)
                }
                if gathersAll {
                    gathered.inserts += batch.inserts
                } else if !batch.inserts.isEmpty {
                    _ = try destination.apply(batch)
                }
                count += rows.count
                done += rows.count
                progress?(
                    MigrationProgress(
                        phase: .copying, entity: entityPlan.source.name, completed: done, total: max(total, done)))
            }
            written[entityPlan.destination.name, default: 0] += count
        }
        if gathersAll, !gathered.inserts.isEmpty { _ = try destination.apply(gathered) }
        // Reserve the copied keys, so the new store never hands them out again.
        // Drivers that count inserted keys already (the atomic engine) answer the first probe past
        // them; the others hand out the copied keys now.
        for (root, key) in maxKeys.sorted(by: { $0.key < $1.key }) where key > 0 {
            let first = try destination.allocatePrimaryKeys(forEntity: root, count: 1).lowerBound
            if first < key {
                _ = try destination.allocatePrimaryKeys(forEntity: root, count: Int(clamping: key - first))
            }
        }
        return written
    }
}

/// The uniqueness constraints a migration must check, with the values seen so far.
struct UniquenessCheck {
    private struct Check {
        let entity: EntityDescription
        let properties: [String]
        var seen: [[StoreValue]: Int64] = [:]
    }
    private var checks: [Check]

    init(plan: StoreMigrationPlan) {
        checks = plan.constraintsToCheck.compactMap { check in
            plan.destinationModel.entity(named: check.entity).map { Check(entity: $0, properties: check.properties) }
        }
    }

    /// Records a migrated row of `entity`.
    ///
    /// - Throws: ``MigrationError`` `.constraintViolation` when it repeats another row's values.
    mutating func add(_ row: RowSnapshot, of entity: EntityDescription) throws {
        for index in checks.indices where entity.isKind(of: checks[index].entity) {
            var values: [StoreValue] = []
            for name in checks[index].properties {
                guard let slot = entity.index(ofProperty: name), slot < row.values.count, !row.values[slot].isNull
                else {
                    values = []
                    break
                }
                values.append(row.values[slot])
            }
            guard !values.isEmpty else { continue }
            if let other = checks[index].seen[values] {
                let check = checks[index]
                throw MigrationError(
                    .constraintViolation,
                    "existing rows break the uniqueness constraint (\(check.properties.joined(separator: ", "))) of \(check.entity.name) in the new model: rows \(other) and \(row.id.primaryKey) both have \(values.map(\.displayText).joined(separator: ", ")); change or remove the duplicates before migrating, or resolve them in a custom migration stage"
                )
            }
            checks[index].seen[values] = row.id.primaryKey
        }
    }
}

/// How far a migration has come.
public struct MigrationProgress: Sendable, Hashable {
    /// What the migration is doing.
    public enum Phase: String, Sendable, Hashable {
        /// Reading the store and planning.
        case planning
        /// Copying rows into the new store.
        case copying
        /// Migrating in place (the driver's own transaction).
        case inPlace
        /// Creating, relating and validating objects (mapping models with policies).
        case objects
        /// Putting the new store in place of the old.
        case replacing
        /// Done.
        case finished
    }
    /// The phase.
    public var phase: Phase
    /// The entity being copied, when there is one.
    public var entity: String?
    /// Rows (or objects) done.
    public var completed: Int
    /// Rows (or objects) in all.
    public var total: Int

    /// Creates a progress report.
    public init(phase: Phase, entity: String? = nil, completed: Int = 0, total: Int = 0) {
        self.phase = phase
        self.entity = entity
        self.completed = completed
        self.total = total
    }

    /// `completed / total`, from 0 to 1 (1 when there is nothing to do).
    public var fraction: Double { total > 0 ? min(1, Double(completed) / Double(total)) : 1 }
}
