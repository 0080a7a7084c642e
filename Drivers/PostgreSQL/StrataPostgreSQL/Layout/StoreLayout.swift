import Foundation
import Strata

/// How a model maps onto the tables and columns of a PostgreSQL store: Core Data's SQLite layout
/// (docs/formats/postgresql.md) inside one PostgreSQL schema.
///
/// - One table per inheritance root, `Z<ROOT>`, with `Z_PK`, `Z_ENT`, `Z_OPT`, then one column per
///   stored attribute and to-one relationship of every entity of the hierarchy (`Z<NAME>`, suffixed
///   `1`, `2`, … on collisions), `Z<n>_<REL>` entity columns for to-one relationships whose
///   destination has subentities, and `Z_FOK_<REL>` order columns for ordered one-to-many
///   relationships.
/// - Many-to-many relationships (and to-many relationships without an inverse) live in join tables
///   `Z_<n><REL>`.
/// - `Z_PRIMARYKEY` and `Z_METADATA` as in Core Data.
///
/// Built once when a store opens, from the model alone (the names are a function of the model);
/// immutable afterwards.
///
/// Thread safety: immutable after `init`, `Sendable`.
final class StoreLayout: Sendable {
    /// The model the layout maps.
    let model: ManagedObjectModel
    /// The PostgreSQL schema holding the tables.
    let schema: String
    /// Tables of inheritance roots, by root entity name.
    let tables: [String: TableLayout]
    /// Entity layouts by model entity number.
    let entities: [Int32: EntityLayout]
    /// Join tables, by table name.
    let joinTables: [String: JoinTable]

    init(model: ManagedObjectModel, schema: String, entities included: [EntityDescription]) {
        self.model = model
        self.schema = schema
        var builder = LayoutBuilder(model: model, schema: schema)
        builder.build(included)
        tables = builder.tables
        entities = builder.entityLayouts
        joinTables = builder.joinTables
    }

    /// The layout of an entity of the model.
    func entity(_ number: Int32) -> EntityLayout? { entities[number] }

    /// `"schema"."name"`.
    func qualified(_ name: String) -> String { "\(schema.sqlName).\(name.sqlName)" }

    /// `"schema"."Z_PRIMARYKEY"`.
    var primaryKeyTable: String { qualified("Z_PRIMARYKEY") }

    /// `"schema"."Z_METADATA"`.
    var metadataTable: String { qualified("Z_METADATA") }
}

/// What a column holds, which fixes its PostgreSQL type and how it is read.
enum ColumnKind: Sendable, Hashable {
    /// An attribute's value.
    case attribute(AttributeType)
    /// A primary key (`Z_PK`, to-one keys, join-table keys).
    case key
    /// An entity number (`Z_ENT`, `Z<n>_…` entity columns).
    case entityNumber
    /// A version or an order key (`Z_OPT`, `Z_FOK_…`).
    case counter

    /// The column's PostgreSQL type.
    var sqlType: String {
        switch self {
        case .key, .counter: "bigint"
        case .entityNumber: "integer"
        case .attribute(let type):
            switch type {
            case .integer16: "smallint"
            case .integer32: "integer"
            case .integer64: "bigint"
            case .boolean: "boolean"
            case .double, .date: "double precision"
            case .float: "real"
            case .decimal: "numeric"
            case .string, .uri: "text"
            case .uuid: "uuid"
            default: "bytea"
            }
        }
    }

    /// Sort group for creation order, as Core Data orders columns: integers, then numbers and
    /// dates, text, binary.
    var group: Int {
        switch self {
        case .key, .counter, .entityNumber: 0
        case .attribute(let type):
            switch type {
            case .integer16, .integer32, .integer64, .boolean: 0
            case .double, .float, .date, .decimal: 1
            case .string, .uri: 2
            default: 3
            }
        }
    }
}

/// The table of one inheritance root.
struct TableLayout: Sendable {
    /// `Z<ROOT>`.
    var name: String
    /// The root entity's name in the model.
    var root: String
    /// Every column after `Z_PK, Z_ENT, Z_OPT`, in creation order.
    var columns: [Column]

    struct Column: Sendable, Hashable {
        var name: String
        var kind: ColumnKind
    }

    /// The position of `column` in `SELECT Z_PK, Z_ENT, Z_OPT, <columns>`.
    func selectIndex(of column: String) -> Int? {
        columns.firstIndex { $0.name == column }.map { $0 + 3 }
    }

    /// The number of columns ``selectList(_:)`` reads.
    var columnCount: Int { 3 + columns.count }

    /// `Z_PK, Z_ENT, Z_OPT, …` with `alias.` before each quoted name; `numeric` columns are read
    /// as text (`::text`), exactly. `alias` is the driver's own (`t0`), never a name from a model.
    func selectList(_ alias: String) -> String {
        let fixed = ["Z_PK", "Z_ENT", "Z_OPT"].map { "\(alias).\($0.sqlName)" }
        let rest = columns.map { column -> String in
            if case .attribute(.decimal) = column.kind { return "\(alias).\(column.name.sqlName)::text" }
            return "\(alias).\(column.name.sqlName)"
        }
        return (fixed + rest).joined(separator: ", ")
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
    var firstOrderColumn: String?
}

/// Where one property of an entity is stored.
enum SlotLayout: Sendable {
    /// Transient, or not stored.
    case none
    /// A column of the entity's table (`index` in the select list).
    case attribute(column: String, index: Int, type: AttributeType)
    /// A foreign-key column (and, when the destination has subentities, its `Z<n>_` entity column).
    case toOne(column: String, index: Int, entityColumn: String?, entityIndex: Int?, destination: Int32)
    /// A to-many relationship stored as the inverse's foreign key in the destination's table.
    case toManyForeignKey(ForeignKeyToMany)
    /// A to-many relationship stored in a join table.
    case toManyJoin(JoinToMany)

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
    /// The destination entity's numbers (the hierarchy of the declared destination), sorted.
    var destinationNumbers: [Int32]
    /// `Z_FOK_<INVERSE>`, for ordered relationships.
    var orderColumn: String?
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
    /// Whether the relationship is its own inverse (owners and members are rows of one entity,
    /// and a deleted row leaves both columns).
    var isReflexive = false
}

/// How one entity's rows are read and written.
struct EntityLayout: Sendable {
    /// The model entity.
    var entity: EntityDescription
    /// The root's table.
    var table: String
    /// One entry per property of ``entity``.
    var slots: [SlotLayout]
}
