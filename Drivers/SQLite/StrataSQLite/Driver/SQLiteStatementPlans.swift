import Foundation
import Strata
import Synchronization

/// The statements the driver runs for every row, with their text built once and their slot in a
/// connection's statement cache (``SQLiteConnection/cached(_:slot:)``), so reading or saving a
/// row builds no SQL and hashes no SQL text.
///
/// Thread safety: `Sendable`; the per-entity plans are immutable, the update statements are
/// added under a mutex.
final class SQLiteStatementPlans: Sendable {
    /// One entity's statements and layout.
    final class Entity: Sendable {
        let layout: EntityLayout
        /// `SELECT … WHERE t0.Z_PK = ?` on the root's table.
        let lookup: (sql: String, slot: Int)
        /// `INSERT INTO …` of ``EntityLayout/insertSQL``.
        let insert: (sql: String, slot: Int)
        /// The same inserting ``insertManyRows`` rows in one statement (``EntityLayout/insertSQL(rows:)``),
        /// when more than one fits; `nil` otherwise.
        let insertMany: (sql: String, slot: Int)?
        /// Rows of ``insertMany``.
        let insertManyRows: Int
        /// Parameters per row of the insert statements: `Z_PK`, `Z_ENT`, `Z_OPT` and the columns.
        let insertWidth: Int32
        /// `DELETE FROM <table> WHERE Z_PK = ? AND Z_OPT = ?`.
        let delete: (sql: String, slot: Int)
        /// The slots of to-many relationships.
        let toManySlots: [Int]
        /// How to read each slot from a `SELECT Z_PK, Z_ENT, Z_OPT, …` row: the slot layouts
        /// without their column names, so decoding a row copies no strings.
        let decode: [Decode]
        /// How each slot binds into the insert and update statements, likewise without names.
        let bind: [Bind]
        /// `Z_ENT` in the store.
        let storeNumber: Int32
        /// How each to-many slot's members are read; `nil` for other slots.
        let toMany: [ToMany?]

        init(
            layout: EntityLayout, lookup: (String, Int), insert: (String, Int), insertMany: (String, Int)?,
            insertManyRows: Int, delete: (String, Int), toMany: [ToMany?]
        ) {
            self.layout = layout
            self.lookup = lookup
            self.insert = insert
            self.insertMany = insertMany
            self.insertManyRows = insertMany == nil ? 1 : insertManyRows
            insertWidth = Int32(layout.insertColumns.count)
            self.delete = delete
            self.toMany = toMany
            toManySlots = layout.slots.indices.filter { layout.slots[$0].isToMany }
            decode = layout.slots.map { slot in
                switch slot {
                case .none, .missing: .null
                case .attribute(_, let index, let type): .attribute(index: index, type: type)
                case .toOne(_, let index, _, let entityIndex, let destination):
                    .toOne(index: index, entityIndex: entityIndex, destination: destination)
                case .toManyForeignKey, .toManyJoin: .unfetched
                }
            }
            bind = layout.slots.map { slot in
                switch slot {
                case .attribute: .value
                case .toOne(_, _, let entityColumn, _, _): entityColumn == nil ? .value : .reference
                case .none, .missing, .toManyForeignKey, .toManyJoin: .none
                }
            }
            storeNumber = layout.storeNumber
        }
    }

    /// Rows one insert statement holds for `layout`: up to 32 (a statement per row costs SQLite
    /// more than binding and storing the row), within 999 parameters (the smallest limit a SQLite
    /// build may have), and at most 64 text values per statement, each of which is bound inside
    /// its own scope (``SQLiteDriver/bindRowsAndStep(_:row:slot:at:_:_:)`` nests one per value).
    static func insertManyRows(_ layout: EntityLayout) -> Int {
        let width = layout.insertColumns.count
        let texts = layout.slots.filter { slot in
            if case .attribute(_, _, .string) = slot { return true }
            return false
        }.count
        return max(1, min(32, 999 / width, 64 / max(texts, 1)))
    }

    /// How one to-many relationship's members are read (``SQLiteDriver/relatedRows(_:)`` and
    /// ``SQLiteDriver/relatedRowsWithDestinations(_:)``): a statement is a head, one `?` per
    /// source key, and ``tail``; the one-source statements (a to-many fault) are built once, with
    /// their cache slot. A class: a fault looks its plan up, and a copy of a structure retained
    /// and released each of its strings.
    final class ToMany: Sendable {
        /// `SELECT <source key>, m.Z_PK, m.Z_ENT FROM … IN (`: the members' keys.
        let idsHead: String
        /// `SELECT <destination table's columns>, <source key> FROM … IN (`: the members' rows;
        /// `nil` when the destination's table is not among the store's.
        let rowsHead: String?
        /// `) … ORDER BY <source key>, <order column,> m.Z_PK`.
        let tail: String
        /// The source key's column in the rows statement.
        let rowsSourceIndex: Int32
        let idsOne: (sql: String, slot: Int)
        let rowsOne: (sql: String, slot: Int)?
        /// Whether a member row comes back once at most for distinct source keys: true for a
        /// foreign key in the member's table (a row has one source), false for a join table.
        let membersAreUnique: Bool

        /// The plan of a to-many slot, or `nil` for any other slot.
        init?(_ slot: SlotLayout, tables: [String: TableLayout], statementSlot: (String) -> (String, Int)) {
            let destination: String
            let source: String
            let from: String
            switch slot {
            case .toManyForeignKey(let fk):
                var filter = ""
                if !fk.destinationNumbers.isEmpty {
                    filter = " AND m.Z_ENT IN (\(fk.destinationNumbers.map(String.init).joined(separator: ", ")))"
                }
                let order = fk.orderColumn.map { "m.\($0.sqlName), " } ?? ""
                destination = fk.table
                source = "m.\(fk.column.sqlName)"
                from = " FROM \(fk.table.sqlName) m WHERE \(source) IN ("
                tail = ")\(filter) ORDER BY \(source), \(order)m.Z_PK"
                membersAreUnique = true
            case .toManyJoin(let join):
                let order = join.orderColumn.map { "j.\($0.sqlName), " } ?? ""
                destination = join.destinationTable
                source = "j.\(join.sourceColumn.sqlName)"
                from =
                    " FROM \(join.table.sqlName) j JOIN \(join.destinationTable.sqlName) m ON m.Z_PK = j.\(join.memberColumn.sqlName) WHERE \(source) IN ("
                tail = ") ORDER BY \(source), \(order)m.Z_PK"
                membersAreUnique = false
            default:
                return nil
            }
            idsHead = "SELECT \(source), m.Z_PK, m.Z_ENT" + from
            idsOne = statementSlot(idsHead + "?" + tail)
            if let table = tables.values.first(where: { $0.name == destination }) {
                let head = "SELECT \(table.selectList("m")), \(source)" + from
                rowsHead = head
                rowsSourceIndex = Int32(3 + table.columns.count)
                rowsOne = statementSlot(head + "?" + tail)
            } else {
                rowsHead = nil
                rowsSourceIndex = 0
                rowsOne = nil
            }
        }
    }

    /// One slot's columns in an insert or update (``Entity/bind``).
    enum Bind: Sendable {
        /// No column (transient, missing, to-many).
        case none
        /// One column: an attribute, or a to-one's key when the destination has no subentities.
        case value
        /// A to-one's key and its `Z<n>_` entity column.
        case reference
    }

    /// One slot's reading (``Entity/decode``).
    enum Decode: Sendable {
        case null
        case attribute(index: Int32, type: AttributeType)
        case toOne(index: Int32, entityIndex: Int32?, destination: Int32)
        case unfetched
    }

    /// The columns one update sets, for one entity.
    private struct UpdateShape: Hashable {
        var entity: Int32
        var changedSlots: [Int]
    }

    private let entities: [Entity?]
    /// Model entity numbers by the store's `Z_ENT` (-1: none), for `Z_ENT` below 65,536.
    private let modelNumbers: [Int32]
    /// All of them, for larger `Z_ENT` values.
    private let allModelNumbers: [Int32: Int32]
    private let updates: Locked<(statements: [UpdateShape: (sql: String, slot: Int)], nextSlot: Int)>

    init(layout: StoreLayout) {
        var entities = [Entity?](repeating: nil, count: Int(layout.entities.keys.max() ?? 0) + 1)
        var slots: [String: Int] = [:]
        func slot(_ sql: String) -> (String, Int) {
            if let known = slots[sql] { return (sql, known) }
            slots[sql] = slots.count
            return (sql, slots.count - 1)
        }
        for (number, entity) in layout.entities.sorted(by: { $0.key < $1.key }) where number >= 0 {
            guard let table = layout.tables.values.first(where: { $0.name == entity.table }) else { continue }
            let manyRows = Self.insertManyRows(entity)
            entities[Int(number)] = Entity(
                layout: entity,
                lookup: slot("SELECT \(table.selectList("t0")) FROM \(table.name.sqlName) t0 WHERE t0.Z_PK = ?"),
                insert: slot(entity.insert),
                insertMany: manyRows > 1 ? slot(entity.insertSQL(rows: manyRows)) : nil,
                insertManyRows: manyRows,
                delete: slot("DELETE FROM \(entity.table.sqlName) WHERE Z_PK = ? AND Z_OPT = ?"),
                toMany: entity.slots.map { ToMany($0, tables: layout.tables, statementSlot: slot) })
        }
        self.entities = entities
        var modelNumbers = [Int32](
            repeating: -1, count: Int(layout.modelNumbers.keys.filter { $0 < 1 << 16 }.max() ?? 0) + 1)
        for (store, model) in layout.modelNumbers where store >= 0 && store < 1 << 16 {
            modelNumbers[Int(store)] = model
        }
        self.modelNumbers = modelNumbers
        allModelNumbers = layout.modelNumbers
        updates = Locked(([:], slots.count))
    }

    /// The plans of the entity numbered `number` (a model entity number), or `nil`.
    @inline(__always) func entity(_ number: Int32) -> Entity? {
        number >= 0 && Int(number) < entities.count ? entities[Int(number)] : nil
    }

    /// The model entity number of the store's `Z_ENT` value `number`, or `nil` when the model has
    /// no entity of that number (any value outside Int32 included: it is never truncated onto one).
    @inline(__always) func modelNumber(storeNumber number: Int64) -> Int32? {
        guard number >= 0, number < modelNumbers.count else {
            return Int32(exactly: number).flatMap { allModelNumbers[$0] }
        }
        let model = modelNumbers[Int(number)]
        return model >= 0 ? model : nil
    }

    /// `UPDATE <table> SET Z_OPT = Z_OPT + 1, <columns of changedSlots> = ? WHERE Z_PK = ? AND
    /// Z_OPT = ?` for `entity`, built once per set of changed slots.
    func update(_ entity: Entity, changedSlots: [Int]) -> (sql: String, slot: Int) {
        let shape = UpdateShape(entity: entity.layout.entity.entityNumber, changedSlots: changedSlots)
        return updates.withLock { updates in
            if let known = updates.statements[shape] { return known }
            var assignments = ["Z_OPT = Z_OPT + 1"]
            for slot in changedSlots where slot < entity.layout.slots.count {
                switch entity.layout.slots[slot] {
                case .attribute(let column, _, _):
                    assignments.append("\(column.sqlName) = ?")
                case .toOne(let column, _, let entityColumn, _, _):
                    assignments.append("\(column.sqlName) = ?")
                    if let entityColumn { assignments.append("\(entityColumn.sqlName) = ?") }
                default: continue
                }
            }
            let statement = (
                sql:
                    "UPDATE \(entity.layout.table.sqlName) SET \(assignments.joined(separator: ", ")) WHERE Z_PK = ? AND Z_OPT = ?",
                slot: updates.nextSlot
            )
            updates.nextSlot += 1
            updates.statements[shape] = statement
            return statement
        }
    }
}
