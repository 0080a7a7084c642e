import Foundation
import Strata

/// How a SQLite store moves from one model's layout to another's in place, planned from a
/// ``StoreMigrationPlan`` (docs/formats/sqlite.md, "Migrating in place").
///
/// Per table of an inheritance hierarchy, each column of the new layout gets an expression over
/// the old table: a column copied (possibly renamed), a column with a default for `NULL`, a
/// constant, or `NULL`. A table whose columns only grow by columns that start `NULL` or constant is
/// changed with `ALTER TABLE … ADD COLUMN` (and an `UPDATE` for constants): no row is rewritten. Any
/// other table is rebuilt as Core Data rebuilds it: renamed to `_T_<TABLE>`, created anew with its
/// surviving columns in their old order and new ones after, filled with one `INSERT … SELECT`, and
/// dropped. Join tables are kept, created, copied under a new name or dropped; indexes are made to
/// match the new layout. The script is `nil` (the core then copies the rows) when the change is
/// one this does not do: renumbered entities, converted values, a to-one becoming to-many, an
/// ordering change, Core Data's hidden foreign key of a to-many without inverse.
struct SQLiteMigrationScript {
    let plan: StoreMigrationPlan
    let source: StoreLayout
    let destination: StoreLayout

    /// What a new column holds, as SQL over the old table.
    enum Expression: Hashable {
        case null
        case column(String)
        case value(SQLiteValue)
        case coalesce(String, SQLiteValue)

        func sql(_ bindings: inout [SQLiteValue]) -> String {
            switch self {
            case .null: return "NULL"
            case .column(let name): return name.sqlName
            case .value(let value):
                bindings.append(value)
                return "?"
            case .coalesce(let name, let value):
                bindings.append(value)
                return "COALESCE(\(name.sqlName), ?)"
            }
        }
    }

    /// One hierarchy's table: where its rows come from and what each new column holds.
    struct TablePlan {
        /// The new table.
        let table: TableLayout
        /// The old table its rows come from; `nil` for a new hierarchy.
        let sourceTable: String?
        /// Column → expression, and the store `Z_ENT`s of the rows it applies to.
        var columns: [String: (expression: Expression, entities: Set<Int32>)] = [:]
        /// `Z_ENT`s of the rows kept.
        var kept: Set<Int32> = []
        /// `Z_ENT`s of the rows dropped.
        var dropped: Set<Int32> = []
    }

    /// A join table whose rows move to a table of another name.
    struct JoinCopy: Hashable {
        let from: JoinToMany
        let to: JoinToMany
    }

    private(set) var tables: [TablePlan] = []
    private(set) var joinCopies: [JoinCopy] = []
    /// Old join tables the new layout keeps as they are.
    private(set) var keptJoinTables: Set<String> = []

    /// Plans the migration, or `nil` when it must be done by copying.
    init?(plan: StoreMigrationPlan, source: StoreLayout) {
        guard plan.keepsEntityNumbers else { return nil }
        for entity in plan.sourceModel.entities
        where source.storeNumber(entity.entityNumber).map({ $0 != entity.entityNumber }) ?? false {
            return nil
        }
        self.plan = plan
        self.source = source
        self.destination = StoreLayout(
            model: plan.destinationModel, entities: plan.destinationModel.entities,
            storeNumbers: Dictionary(
                uniqueKeysWithValues: plan.destinationModel.entities.map { ($0.entityNumber, $0.entityNumber) }),
            existingColumns: nil, existingTables: nil, naming: source.naming)
        if [source, destination].contains(where: {
            $0.entities.values.contains { $0.slots.contains(where: Self.isOwnedForeignKey) }
        }) {
            return nil
        }
        guard let tables = planTables() else { return nil }
        self.tables = tables
    }

    private static func isOwnedForeignKey(_ slot: SlotLayout) -> Bool {
        if case .toManyForeignKey(let key) = slot { return key.ownsColumn }
        return false
    }

    private mutating func planTables() -> [TablePlan]? {
        var result: [TablePlan] = []
        let plansByDestination = Dictionary(plan.entities.map { ($0.destination.entityNumber, $0) }) { a, _ in a }
        for table in destination.tables.values.sorted(by: { $0.name < $1.name }) {
            guard let root = plan.destinationModel.entity(named: table.root) else { return nil }
            let members = plan.destinationModel.entities.filter { root.hierarchyNumbers.contains($0.entityNumber) }
            let sourceRoot = plansByDestination[root.entityNumber]?.source
            if sourceRoot == nil, members.contains(where: { plansByDestination[$0.entityNumber] != nil }) { return nil }
            var tablePlan = TablePlan(
                table: table, sourceTable: sourceRoot.flatMap { source.entity($0.entityNumber)?.table })
            if let sourceRoot {
                guard sourceRoot.superentityName == nil else { return nil }
                tablePlan.dropped = Set(
                    plan.droppedEntities.filter { sourceRoot.hierarchyNumbers.contains($0.entityNumber) }.map(
                        \.entityNumber))
            }
            for member in members {
                guard let entityPlan = plansByDestination[member.entityNumber] else { continue }
                tablePlan.kept.insert(member.entityNumber)
                guard addColumns(of: entityPlan, to: &tablePlan) else { return nil }
            }
            result.append(tablePlan)
        }
        return result
    }

    /// Records the column expressions of one entity's rows; `false` for a change done by copying.
    private mutating func addColumns(of entityPlan: StoreMigrationPlan.EntityPlan, to table: inout TablePlan) -> Bool {
        guard let new = destination.entity(entityPlan.destination.entityNumber),
            let old = source.entity(entityPlan.source.entityNumber)
        else { return false }
        let number = entityPlan.destination.entityNumber
        func set(_ column: String, _ expression: Expression) -> Bool {
            if let existing = table.columns[column] {
                guard existing.expression == expression else { return false }
                table.columns[column]?.entities.insert(number)
            } else {
                table.columns[column] = (expression, [number])
            }
            return true
        }
        for (slot, sourceSlot) in entityPlan.slots.enumerated() {
            let relationship = entityPlan.destination.properties[slot].relationship
            switch (new.slots[slot], sourceSlot) {
            case (.none, _): continue
            case (.missing, _): return false
            case (.attribute(let column, _, _), .attribute(let from, .none, let fallback)):
                guard case .attribute(let oldColumn, _, _) = old.slots[from] else { return false }
                let expression: Expression =
                    fallback.map { .coalesce(oldColumn, ValueCoding.sqliteValue($0)) } ?? .column(oldColumn)
                guard set(column, expression) else { return false }
            case (.attribute(let column, _, _), .constant(let value)):
                guard set(column, .value(ValueCoding.sqliteValue(value))) else { return false }
            case (.attribute(let column, _, _), .null):
                guard set(column, .null) else { return false }
            case (.toOne(let column, _, let entityColumn, _, _), .toOne(let from)):
                guard case .toOne(let oldColumn, _, let oldEntityColumn, _, _) = old.slots[from],
                    set(column, .column(oldColumn))
                else { return false }
                if let entityColumn {
                    guard let oldEntityColumn, set(entityColumn, .column(oldEntityColumn)) else { return false }
                }
            case (.toOne(let column, _, let entityColumn, _, _), .null):
                guard set(column, .null), entityColumn.map({ set($0, .null) }) ?? true else { return false }
            case (.toManyJoin(let join), .toMany(let from, false)):
                guard case .toManyJoin(let oldJoin) = old.slots[from],
                    entityPlan.source.properties[from].relationship?.isOrdered == relationship?.isOrdered
                else { return false }
                if oldJoin == join {
                    keptJoinTables.insert(join.table)
                } else {
                    joinCopies.append(JoinCopy(from: oldJoin, to: join))
                }
            case (.toManyForeignKey, .toMany(let from, false)):
                guard case .toManyForeignKey = old.slots[from],
                    entityPlan.source.properties[from].relationship?.isOrdered == relationship?.isOrdered
                else { return false }
            case (.toManyJoin, .constant), (.toManyJoin, .null), (.toManyForeignKey, .constant),
                (.toManyForeignKey, .null):
                continue
            default:
                return false
            }
        }
        return true
    }
}
