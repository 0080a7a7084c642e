import Foundation
import Strata
import Synchronization

/// SQL prepared on each connection the first time it runs there, found by a number rather than by
/// hashing its text (``PGConnection/executePrepared(_:_:)``).
struct PreparedSQL: Sendable {
    let sql: String
    let id: Int

    private static let counter = Atomic<Int>(0)

    init(_ sql: String) {
        self.sql = sql
        id = Self.counter.add(1, ordering: .relaxed).newValue
    }
}

/// The statements run for every row, built once per entity or table: reading rows by key,
/// inserting, deleting, and updating a given set of slots. Each writes many rows with one
/// statement over arrays (`unnest($1::bigint[], …)`), so a change set of any size is a few round
/// trips, and each is prepared once per connection.
///
/// Thread safety: immutable after `init` but for the update statements, built on demand behind a lock.
final class StatementPlans: Sendable {
    /// How one slot of a row is read from `SELECT Z_PK, Z_ENT, Z_OPT, <columns>`.
    enum Decode: Sendable {
        case null
        case attribute(index: Int, type: AttributeType)
        case toOne(index: Int, entityIndex: Int?, destination: Int32)
        case unfetched
        case empty
    }

    /// One column an insert or update writes: the slot it comes from and what it holds.
    struct Write: Sendable {
        var slot: Int
        var column: String
        var kind: ColumnKind
    }

    /// An entity's plan; a class, so a row's decoding finds it without copying its arrays.
    final class Entity: Sendable {
        let layout: EntityLayout
        /// `SELECT … FROM table t0 WHERE t0.Z_PK = $1`.
        let lookup: PreparedSQL
        let decode: [Decode]
        /// The columns an insert writes after `Z_PK, Z_ENT, Z_OPT`.
        let inserted: [Write]
        /// `INSERT … SELECT … FROM unnest($1::bigint[], $3::…, …)`, `$2` the entity number.
        let insert: PreparedSQL
        /// Slots of to-many relationships.
        let toManySlots: [Int]

        init(
            layout: EntityLayout, lookup: String, decode: [Decode], inserted: [Write], insert: String,
            toManySlots: [Int]
        ) {
            self.layout = layout
            self.lookup = PreparedSQL(lookup)
            self.decode = decode
            self.inserted = inserted
            self.insert = PreparedSQL(insert)
            self.toManySlots = toManySlots
        }
    }

    final class Table: Sendable {
        /// `SELECT … FROM table t0 WHERE t0.Z_PK = ANY($1::bigint[])`.
        let lookupMany: PreparedSQL
        /// `DELETE … USING unnest($1::bigint[], $2::bigint[]) … RETURNING Z_PK`.
        let delete: PreparedSQL

        init(lookupMany: String, delete: String) {
            self.lookupMany = PreparedSQL(lookupMany)
            self.delete = PreparedSQL(delete)
        }
    }

    private let entities: [Int32: Entity]
    let tables: [String: Table]
    private let layout: StoreLayout
    private let updates = Locked<[UpdateShape: PreparedSQL]>([:])

    private struct UpdateShape: Hashable {
        var entity: Int32
        var slots: [Int]
    }

    init(layout: StoreLayout) {
        self.layout = layout
        var tables: [String: Table] = [:]
        for table in layout.tables.values {
            let name = layout.qualified(table.name)
            let select = "SELECT \(table.selectList("t0")) FROM \(name) t0"
            let pk = "Z_PK".sqlName
            let opt = "Z_OPT".sqlName
            tables[table.name] = Table(
                lookupMany: "\(select) WHERE t0.\(pk) = ANY($1::bigint[])",
                delete:
                    "DELETE FROM \(name) t USING unnest($1::bigint[], $2::bigint[]) AS u(k, v) WHERE t.\(pk) = u.k AND t.\(opt) = u.v RETURNING t.\(pk)"
            )
        }
        self.tables = tables
        var entities: [Int32: Entity] = [:]
        for (number, entityLayout) in layout.entities {
            // Every entity layout belongs to a built table.
            let table = layout.tables[entityLayout.entity.rootEntityName]!
            let select = "SELECT \(table.selectList("t0")) FROM \(layout.qualified(table.name)) t0"
            var decode: [Decode] = []
            var inserted: [Write] = []
            var toMany: [Int] = []
            for (slot, slotLayout) in entityLayout.slots.enumerated() {
                let property = entityLayout.entity.properties[slot]
                switch slotLayout {
                case .none:
                    decode.append(property.relationship?.isToMany == true && !property.isTransient ? .empty : .null)
                case .attribute(let column, let index, let type):
                    decode.append(.attribute(index: index, type: type))
                    inserted.append(Write(slot: slot, column: column, kind: .attribute(type)))
                case .toOne(let column, let index, let entityColumn, let entityIndex, let destination):
                    decode.append(.toOne(index: index, entityIndex: entityIndex, destination: destination))
                    inserted.append(Write(slot: slot, column: column, kind: .key))
                    if let entityColumn {
                        inserted.append(Write(slot: slot, column: entityColumn, kind: .entityNumber))
                    }
                case .toManyForeignKey, .toManyJoin:
                    decode.append(.unfetched)
                    toMany.append(slot)
                }
            }
            entities[number] = Entity(
                layout: entityLayout, lookup: "\(select) WHERE t0.\("Z_PK".sqlName) = $1", decode: decode,
                inserted: inserted, insert: Self.insertSQL(layout.qualified(table.name), inserted), toManySlots: toMany)
        }
        self.entities = entities
    }

    private static func insertSQL(_ table: String, _ columns: [Write]) -> String {
        let names = (["Z_PK", "Z_ENT", "Z_OPT"] + columns.map(\.column)).map(\.sqlName).joined(separator: ", ")
        var values = ["u.k", "$2", "1"]
        var arrays = ["$1::bigint[]"]
        var aliases = ["k"]
        for (position, column) in columns.enumerated() {
            values.append("u.c\(position)\(ValueCoding.elementCast(of: column.kind))")
            arrays.append("$\(position + 3)::\(ValueCoding.arrayType(of: column.kind).cast)")
            aliases.append("c\(position)")
        }
        return
            "INSERT INTO \(table) (\(names)) SELECT \(values.joined(separator: ", ")) FROM unnest(\(arrays.joined(separator: ", "))) AS u(\(aliases.joined(separator: ", ")))"
    }

    /// The plan of a model entity stored here.
    func entity(_ number: Int32) -> Entity? { entities[number] }

    /// The columns an update of `slots` writes, in parameter order after `$1` (keys) and `$2`
    /// (expected versions).
    func updatedColumns(_ plan: Entity, slots: [Int]) -> [Write] {
        let wanted = Set(slots)
        return plan.inserted.filter { wanted.contains($0.slot) }
    }

    /// `UPDATE … SET <columns of slots>, Z_OPT = Z_OPT + 1 FROM unnest(keys, versions, …) WHERE
    /// Z_PK = key AND Z_OPT = version RETURNING Z_PK`, built once per entity and set of slots.
    func update(_ plan: Entity, slots: [Int]) -> PreparedSQL {
        let shape = UpdateShape(entity: plan.layout.entity.entityNumber, slots: slots)
        if let sql = updates.withLock({ $0[shape] }) { return sql }
        let columns = updatedColumns(plan, slots: slots)
        let pk = "Z_PK".sqlName
        let opt = "Z_OPT".sqlName
        var sets: [String] = []
        var arrays = ["$1::bigint[]", "$2::bigint[]"]
        var aliases = ["k", "v"]
        for (position, column) in columns.enumerated() {
            sets.append("\(column.column.sqlName) = u.c\(position)\(ValueCoding.elementCast(of: column.kind))")
            arrays.append("$\(position + 3)::\(ValueCoding.arrayType(of: column.kind).cast)")
            aliases.append("c\(position)")
        }
        sets.append("\(opt) = t.\(opt) + 1")
        let sql = PreparedSQL(
            """
            UPDATE \(layout.qualified(plan.layout.table)) t SET \(sets.joined(separator: ", ")) \
            FROM unnest(\(arrays.joined(separator: ", "))) AS u(\(aliases.joined(separator: ", "))) \
            WHERE t.\(pk) = u.k AND t.\(opt) = u.v RETURNING t.\(pk)
            """)
        return updates.withLock { cached in
            if let existing = cached[shape] { return existing }
            cached[shape] = sql
            return sql
        }
    }
}
