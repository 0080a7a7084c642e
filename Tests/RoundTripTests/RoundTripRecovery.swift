import Foundation
import Strata
import StrataTesting
import StrataTools

@testable import StrataSQLite

/// The model-recovery stage: a SQLite store Strata wrote, read without its embedded model.
///
/// Strata writes no `Z_MODELCACHE` (it cannot produce Apple's keyed archive), so recovery infers
/// the model from the tables, and names come back upper-cased (`ZTITLE1` → `TITLE1`). "Equals the
/// model" therefore means: the recovered model maps onto exactly the tables, columns and join
/// tables the writing model uses, and reads the same rows and values through them.
enum RoundTripRecovery {
    /// How one slot is stored, in the store's own terms.
    enum Storage: Hashable, CustomStringConvertible {
        case column(table: String, column: String)
        case join(table: String, source: String, member: String, order: String?)
        case foreignKey(table: String, column: String, order: String?)

        var description: String {
            switch self {
            case .column(let table, let column): "\(table).\(column)"
            case .join(let table, let source, let member, let order): "\(table)(\(source) → \(member), \(order ?? "-"))"
            case .foreignKey(let table, let column, let order): "\(table).\(column) (\(order ?? "-"))"
            }
        }
    }

    static func storage(_ slot: SlotLayout, table: String) -> [Storage] {
        switch slot {
        case .attribute(let column, _, _): [.column(table: table, column: column)]
        case .toOne(let column, _, let entityColumn, _, _):
            [.column(table: table, column: column)] + (entityColumn.map { [.column(table: table, column: $0)] } ?? [])
        case .toManyJoin(let join):
            [.join(table: join.table, source: join.sourceColumn, member: join.memberColumn, order: join.orderColumn)]
        case .toManyForeignKey(let fk): [.foreignKey(table: fk.table, column: fk.column, order: fk.orderColumn)]
        case .none, .missing: []
        }
    }

    static func driver(_ model: ManagedObjectModel, _ url: URL, configuration: String? = nil) throws -> SQLiteDriver {
        let request = StoreOpenRequest(
            url: url, model: model, configuration: configuration, options: StoreOptions(isReadOnly: true))
        guard let driver = try SQLiteDriverFactory().makeDriver(request) as? SQLiteDriver else {
            throw StoreError(.invalidRequest, "the SQLite factory made another driver")
        }
        return driver
    }

    /// A value with references reduced to their keys (an inferred model may read a foreign key as
    /// an integer), and values compared exactly.
    static func plain(_ value: StoreValue) -> ExactValue {
        // Inference reads what the column types say (docs/formats/sqlite-model-cache.md): Booleans
        // and foreign keys as integers, URIs as strings, UUIDs as their 16 bytes.
        switch value {
        case .reference(let id): return ExactValue(.integer(id.primaryKey))
        case .bool(let flag): return ExactValue(.integer(flag ? 1 : 0))
        case .uri(let url): return ExactValue(.string(url.absoluteString))
        case .uuid(let uuid): return ExactValue(.binary(withUnsafeBytes(of: uuid.uuid) { Data($0) }))
        default: return ExactValue(value)
        }
    }

    /// The problems found, one line each; empty when the recovered model reads the store as the
    /// writing model does.
    static func check(_ location: StoreLocation, model: ManagedObjectModel, configuration: String?) -> [String] {
        guard let url = location.url else { return [] }
        do {
            guard
                let recovered = try SQLiteDriverFactory().recoverModel(at: url, options: StoreOptions(isReadOnly: true))
            else {
                return ["no model recovered"]
            }
            let original = try driver(model, url, configuration: configuration)
            let inferred = try driver(recovered.model, url)
            defer {
                try? original.close()  // read-only connections: nothing to lose
                try? inferred.close()
            }
            let held = try model.entities(forConfiguration: configuration)
            return try compare(original, inferred, entities: held, recovered: recovered.model)
        } catch {
            return ["recovering the model: \(error)"]
        }
    }

    private static func compare(
        _ original: SQLiteDriver, _ inferred: SQLiteDriver, entities: [EntityDescription], recovered: ManagedObjectModel
    ) throws -> [String] {
        var problems: [String] = []
        let tables = Set(original.layout.tables.values.map(\.name))
        let otherTables = Set(inferred.layout.tables.values.map(\.name))
        // A configuration's store lists every entity of the model in Z_PRIMARYKEY, so the recovered
        // model may name tables of other configurations' entities, which the file does not have.
        if !tables.isSubset(of: otherTables) {
            problems.append("tables \(otherTables.sorted()), expected \(tables.sorted())")
        }
        for table in original.layout.tables.values {
            let other = inferred.layout.tables.values.first { $0.name == table.name }
            let columns = Set(table.columns.map(\.name))
            let otherColumns = Set(other?.columns.map(\.name) ?? [])
            if columns != otherColumns {
                problems.append("columns of \(table.name): \(otherColumns.sorted()), expected \(columns.sorted())")
            }
        }
        // A join table read as the other side of its pair lists its columns the other way round.
        let joins = Set(original.layout.joinTables.values.map(describe))
        let otherJoins = Set(inferred.layout.joinTables.values.map(describe))
        if joins != otherJoins {
            problems.append(
                "join tables differ: recovered \(otherJoins.subtracting(joins).sorted()), written \(joins.subtracting(otherJoins).sorted())"
            )
        }
        var inferredSlots: [Storage: (EntityDescription, Int)] = [:]
        for layout in inferred.layout.entities.values {
            for (slot, storage) in layout.slots.enumerated() {
                for stored in storedSlots(storage, layout.table) {
                    inferredSlots[stored] = inferredSlots[stored] ?? (layout.entity, slot)
                }
            }
        }
        for layout in original.layout.entities.values {
            for (slot, storage) in layout.slots.enumerated() {
                for stored in storedSlots(storage, layout.table) {
                    if case .foreignKey = stored { continue }  // the to-many side of a one-to-many leaves no trace
                    if inferredSlots[stored] == nil {
                        problems.append(
                            "\(RoundTripText.name(layout.entity.name)).\(RoundTripText.name(layout.entity.properties[slot].name)) in \(stored) has no slot in the recovered model"
                        )
                    }
                }
            }
        }
        // The same rows, column by column, and the same members of every join.
        for entity in entities where !entity.isAbstract {
            guard let other = recovered.entity(named: entity.name) else {
                problems.append("the recovered model has no entity \(RoundTripText.name(entity.name))")
                continue
            }
            var fetch = StoreFetch(entity: entity)
            fetch.includesSubentities = false
            var otherFetch = StoreFetch(entity: other)
            otherFetch.includesSubentities = false
            let rows = try original.fetch(fetch).rows.sorted { $0.id.primaryKey < $1.id.primaryKey }
            let otherRows = try inferred.fetch(otherFetch).rows.sorted { $0.id.primaryKey < $1.id.primaryKey }
            guard rows.map(\.id.primaryKey) == otherRows.map(\.id.primaryKey) else {
                problems.append(
                    "rows of \(RoundTripText.name(entity.name)): \(otherRows.map(\.id.primaryKey)), expected \(rows.map(\.id.primaryKey))"
                )
                continue
            }
            guard let layout = original.layout.entity(entity.entityNumber),
                let otherLayout = inferred.layout.entity(other.entityNumber)
            else { continue }
            for (slot, storage) in layout.slots.enumerated() {
                let property = "\(RoundTripText.name(entity.name)).\(RoundTripText.name(entity.properties[slot].name))"
                for stored in storedSlots(storage, layout.table) {
                    guard
                        let otherSlot = otherLayout.slots.indices.first(where: {
                            storedSlots(otherLayout.slots[$0], otherLayout.table).contains(stored)
                        })
                    else { continue }
                    switch stored {
                    case .column:
                        if case .toOne(_, _, let entityColumn?, _, _) = storage,
                            stored == .column(table: layout.table, column: entityColumn)
                        {
                            continue
                        }
                        for (row, otherRow) in zip(rows, otherRows)
                        where plain(row.values[slot]) != plain(otherRow.values[otherSlot]) {
                            problems.append(
                                "\(property) of p\(row.id.primaryKey): \(plain(otherRow.values[otherSlot])), expected \(plain(row.values[slot]))"
                            )
                            break
                        }
                    case .join:
                        let members = try original.relatedRows(
                            RelatedRowsRequest(entity: entity, slot: slot, sources: rows.map(\.id)))
                        let otherMembers = try inferred.relatedRows(
                            RelatedRowsRequest(entity: other, slot: otherSlot, sources: otherRows.map(\.id)))
                        for (row, otherRow) in zip(rows, otherRows)
                        where members[row.id]?.map(\.primaryKey) != otherMembers[otherRow.id]?.map(\.primaryKey) {
                            problems.append("\(property) of p\(row.id.primaryKey): members differ")
                            break
                        }
                    case .foreignKey: continue
                    }
                }
            }
        }
        return Array(problems.prefix(8))
    }

    /// A join table as its name and its key columns, each with the column ordering its members,
    /// in name order (whichever side the layout calls first).
    static func describe(_ join: JoinTable) -> String {
        let columns = [(join.firstColumn, join.firstOrderColumn), (join.secondColumn, join.secondOrderColumn)]
            .map { "\($0.0) order \($0.1 ?? "-")" }.sorted()
        return "\(join.name)(\(columns.joined(separator: ", ")))"
    }

    private static func storedSlots(_ slot: SlotLayout, _ table: String) -> [Storage] { storage(slot, table: table) }
}
