import Foundation
import Strata

/// How a model maps onto the tables and columns of a Core Data SQLite store (docs/formats/sqlite.md).
///
/// Built once when a store opens, from the model and, for an existing store, from the store's own
/// `Z_PRIMARYKEY` numbers and table columns; immutable afterwards.
///
/// - One table per inheritance root, `Z<ROOT>`, with `Z_PK`, `Z_ENT`, `Z_OPT`, then one column per
///   stored attribute and to-one relationship of every entity of the hierarchy (`Z<NAME>`,
///   suffixed `1`, `2`, … on collisions), `Z<n>_<REL>` entity columns for to-one relationships whose
///   destination has subentities, and `Z_FOK_<REL>` order columns for ordered one-to-many relationships.
/// - Many-to-many relationships (and to-many relationships without an inverse) live in join tables
///   `Z_<n><REL>`; in an existing Core Data store a to-many without inverse may instead be a
///   foreign key `Z<n><REL>` in the destination's table.
/// - ``LayoutBuilder`` and ``NameGenerator`` say how names are drawn and collisions resolved.
///
/// Thread safety: immutable after `init`, `Sendable`.
final class StoreLayout: Sendable {
    /// The model the layout maps.
    let model: ManagedObjectModel
    /// Tables of inheritance roots, by root entity name.
    let tables: [String: TableLayout]
    /// Entity layouts by model entity number.
    let entities: [Int32: EntityLayout]
    /// Join tables, by table name.
    let joinTables: [String: JoinTable]
    /// Store `Z_ENT` → model entity number.
    let modelNumbers: [Int32: Int32]
    /// Whether store numbers order entities as model numbers do (sorts can tie-break on `Z_ENT`).
    let numbersAreMonotone: Bool
    /// The naming rules the store follows.
    let naming: LayoutNaming
    /// Per table of a hierarchy, the statements that remove a deleted row's key from the join
    /// tables and owned foreign keys that hold keys of that hierarchy (one `?`: the key).
    let unlinkStatements: [String: [String]]

    init(
        model: ManagedObjectModel, entities included: [EntityDescription], storeNumbers: [Int32: Int32],
        existingColumns: [String: [String]]?, existingTables: Set<String>?, naming: LayoutNaming = .coreData
    ) {
        self.model = model
        var modelNumbers: [Int32: Int32] = [:]
        for (modelNumber, storeNumber) in storeNumbers { modelNumbers[storeNumber] = modelNumber }
        self.modelNumbers = modelNumbers
        let sorted = storeNumbers.sorted { $0.key < $1.key }.map(\.value)
        numbersAreMonotone = zip(sorted, sorted.dropFirst()).allSatisfy { $0 < $1 }
        self.naming = naming
        var builder = LayoutBuilder(
            model: model, storeNumbers: storeNumbers, existingColumns: existingColumns, existingTables: existingTables,
            naming: naming)
        builder.build(included)
        tables = builder.tables
        entities = builder.entityLayouts
        joinTables = builder.joinTables
        unlinkStatements = Self.unlinkStatements(builder.entityLayouts.values, tables: builder.tables)
    }

    /// ``unlinkStatements``: for each join slot, its source column holds keys of the owner's
    /// hierarchy and its member column keys of the destination's (keys are unique per hierarchy,
    /// so removing every row with the deleted key is exact); an owned foreign key is cleared in
    /// the members' rows.
    private static func unlinkStatements(
        _ layouts: Dictionary<Int32, EntityLayout>.Values, tables: [String: TableLayout]
    ) -> [String: [String]] {
        var statements: [String: Set<String>] = [:]
        for layout in layouts {
            for slot in layout.slots {
                switch slot {
                case .toManyJoin(let join):
                    statements[layout.table, default: []].insert(
                        "DELETE FROM \(join.table.sqlName) WHERE \(join.sourceColumn.sqlName) = ?")
                    statements[join.destinationTable, default: []].insert(
                        "DELETE FROM \(join.table.sqlName) WHERE \(join.memberColumn.sqlName) = ?")
                case .toManyForeignKey(let fk) where fk.ownsColumn:
                    let order = fk.orderColumn.map { ", \($0.sqlName) = NULL" } ?? ""
                    statements[layout.table, default: []].insert(
                        "UPDATE \(fk.table.sqlName) SET \(fk.column.sqlName) = NULL\(order) WHERE \(fk.column.sqlName) = ?"
                    )
                default: continue
                }
            }
        }
        return statements.mapValues { $0.sorted() }
    }

    /// The layout of an entity of the model.
    func entity(_ number: Int32) -> EntityLayout? { entities[number] }

    /// The store's `Z_ENT` for a model entity number.
    func storeNumber(_ modelNumber: Int32) -> Int32? { entities[modelNumber]?.storeNumber }

    /// The store's `Z_ENT` values of `numbers` (model numbers), sorted.
    func storeNumbers(_ numbers: Set<Int32>) -> [Int32] { numbers.compactMap { storeNumber($0) }.sorted() }
}

/// The table of one inheritance root.
struct TableLayout: Sendable {
    /// `Z<ROOT>`.
    var name: String
    /// The root entity's name in the model.
    var root: String
    /// Every column after `Z_PK, Z_ENT, Z_OPT`, in creation order, with its declared type.
    var columns: [Column]
    /// Columns the existing table lacks (an Apple store opened with a model that differs).
    var missing: Set<String> = []

    struct Column: Sendable, Hashable {
        var name: String
        var type: String
        /// Sort group for creation order: INTEGER, then FLOAT/TIMESTAMP/DECIMAL, VARCHAR, BLOB.
        var group: Int
    }

    /// The position of `column` in `SELECT Z_PK, Z_ENT, Z_OPT, <columns>`.
    func selectIndex(of column: String) -> Int32? {
        columns.firstIndex { $0.name == column }.map { Int32($0 + 3) }
    }

    /// `Z_PK, Z_ENT, Z_OPT, …` with `alias.` before each (quoted) name; `alias` is the driver's
    /// own (`t0`), never a name from a model or a store.
    func selectList(_ alias: String) -> String {
        (["Z_PK", "Z_ENT", "Z_OPT"] + columns.map(\.name)).map { "\(alias).\($0.sqlName)" }.joined(separator: ", ")
    }
}

/// A many-to-many join table `Z_<n><REL>`.
struct JoinTable: Sendable, Hashable {
    var name: String
    /// Holds primary keys of the rows on the `first` side.
    var firstColumn: String
    /// Holds primary keys of the rows on the `second` side.
    var secondColumn: String
    /// Order keys of the second column's members, per first-column row (ordered relationships).
    var secondOrderColumn: String?
    /// Order keys of the first column's members, per second-column row.
    var firstOrderColumn: String? = nil
}

/// Where one property of an entity is stored.
enum SlotLayout: Sendable {
    /// Transient, or not stored.
    case none
    /// A column of the entity's table.
    case attribute(column: String, index: Int32, type: AttributeType)
    /// A foreign-key column (and, when the destination has subentities, its `Z<n>_` entity column).
    case toOne(column: String, index: Int32, entityColumn: String?, entityIndex: Int32?, destination: Int32)
    /// A to-many relationship stored as the inverse's foreign key in the destination's table.
    case toManyForeignKey(ForeignKeyToMany)
    /// A to-many relationship stored in a join table.
    case toManyJoin(JoinToMany)
    /// A column the existing store does not have.
    case missing

    var isToMany: Bool {
        switch self {
        case .toManyForeignKey, .toManyJoin: true
        default: false
        }
    }
}

/// A to-many relationship read through the destination's foreign key.
struct ForeignKeyToMany: Sendable, Hashable {
    /// The destination root's table.
    var table: String
    /// The inverse's foreign-key column there.
    var column: String
    /// The destination entity's store numbers (the hierarchy of the declared destination).
    var destinationNumbers: [Int32]
    /// `Z_FOK_<INVERSE>`, for ordered relationships.
    var orderColumn: String?
    /// Whether the relationship itself sets the column (Core Data's hidden to-one for a to-many
    /// without inverse, so each member has at most one owner) rather than an inverse to-one.
    var ownsColumn = false
}

/// A to-many relationship read through a join table.
struct JoinToMany: Sendable, Hashable {
    var table: String
    /// The column holding the source row's key.
    var sourceColumn: String
    /// The column holding the members' keys.
    var memberColumn: String
    /// The members' order column, for ordered relationships.
    var orderColumn: String?
    /// The destination root's table (joined for the members' `Z_ENT`).
    var destinationTable: String
    /// For an ordered relationship that is its own inverse: the column that holds, in the
    /// member's row `(member, owner)`, the member's position in the owner's list (Core Data's
    /// `Z_FOK_<n><NAME>` beside `FOK_REFLEXIVE`), kept equal to the owner's `orderColumn`.
    var mirrorOrderColumn: String? = nil
}

/// How one entity's rows are read and written.
struct EntityLayout: Sendable {
    init(entity: EntityDescription, storeNumber: Int32, table: String, slots: [SlotLayout]) {
        self.entity = entity
        self.storeNumber = storeNumber
        self.table = table
        self.slots = slots
        self.insert = ""
        self.insert = insertSQL
    }

    /// ``insertSQL``, computed once.
    private(set) var insert: String

    /// The model entity.
    var entity: EntityDescription
    /// `Z_ENT` in the store.
    var storeNumber: Int32
    /// The root's table.
    var table: String
    /// One entry per property of ``entity``.
    var slots: [SlotLayout]

    /// `INSERT INTO <table> (Z_PK, Z_ENT, Z_OPT, <stored columns>) VALUES (?, …)`, in slot order
    /// (a to-one's entity column right after its key column).
    var insertSQL: String { insertSQL(rows: 1) }

    /// ``insertSQL`` inserting `rows` rows at once: `VALUES (?, …), (?, …), …`.
    func insertSQL(rows: Int) -> String {
        let columns = insertColumns
        let placeholders = "(" + String(repeating: "?, ", count: columns.count - 1) + "?)"
        return
            "INSERT INTO \(table.sqlName) (\(columns.map(\.sqlName).joined(separator: ", "))) VALUES \(Array(repeating: placeholders, count: rows).joined(separator: ", "))"
    }

    /// The columns ``insertSQL`` sets: one parameter each per row.
    var insertColumns: [String] {
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        for slot in slots {
            switch slot {
            case .attribute(let column, _, _): columns.append(column)
            case .toOne(let column, _, let entityColumn, _, _):
                columns.append(column)
                if let entityColumn { columns.append(entityColumn) }
            default: continue
            }
        }
        return columns
    }
}
