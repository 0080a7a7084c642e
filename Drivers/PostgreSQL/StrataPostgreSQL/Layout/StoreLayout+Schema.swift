import Foundation
import Strata

extension StoreLayout {
    /// The statements that create a new store's tables and indexes in the schema (which exists),
    /// with the `Z_PRIMARYKEY` and `Z_METADATA` tables (their rows are written separately).
    func creationStatements() -> [String] {
        var sql: [String] = [
            "CREATE TABLE \(primaryKeyTable) (\("Z_ENT".sqlName) integer PRIMARY KEY, \("Z_NAME".sqlName) text, \("Z_SUPER".sqlName) integer, \("Z_MAX".sqlName) bigint)",
            "CREATE TABLE \(metadataTable) (\("Z_VERSION".sqlName) integer PRIMARY KEY, \("Z_UUID".sqlName) varchar(255), \("Z_PLIST".sqlName) bytea)",
        ]
        var indexNames: Set<String> = []
        /// `columns` are (name, suffix) pairs; the suffix (`DESC`) is the driver's own text.
        func index(_ name: String, unique: Bool = false, on table: String, _ columns: [(String, String)]) {
            // PostgreSQL keeps 63 bytes of a name; longer index names are shortened with a hash so
            // two long names stay apart.
            let indexName = Self.identifier(name)
            guard indexNames.insert(indexName).inserted else { return }
            let list = columns.map { $0.1.isEmpty ? $0.0.sqlName : "\($0.0.sqlName) \($0.1)" }
            sql.append(
                "CREATE \(unique ? "UNIQUE " : "")INDEX \(indexName.sqlName) ON \(qualified(table)) (\(list.joined(separator: ", ")))"
            )
        }
        for table in tables.values.sorted(by: { $0.name < $1.name }) {
            // Column types are the driver's constants (ColumnKind.sqlType), never read from a store.
            let columns =
                [
                    "\("Z_PK".sqlName) bigint PRIMARY KEY", "\("Z_ENT".sqlName) integer NOT NULL",
                    "\("Z_OPT".sqlName) bigint NOT NULL",
                ] + table.columns.map { "\($0.name.sqlName) \($0.kind.sqlType)" }
            sql.append("CREATE TABLE \(qualified(table.name)) (\(columns.joined(separator: ", ")))")
        }
        for layout in entities.values.sorted(by: { $0.entity.entityNumber < $1.entity.entityNumber }) {
            let entity = layout.entity
            if entity.superentityName == nil, entity.hierarchyNumbers.count > 1 {
                index("\(layout.table)_Z_ENT_INDEX", on: layout.table, [("Z_ENT", "")])
            }
            let own = Set(entity.ownProperties.map(\.name))
            for (slot, property) in zip(layout.slots, entity.properties) where own.contains(property.name) {
                switch slot {
                case .toOne(let column, _, _, _, _):
                    index("\(layout.table)_\(column)_INDEX", on: layout.table, [(column, "")])
                case .attribute(let column, _, _) where property.attribute?.isIndexed == true:
                    index("\(layout.table)_\(column)_INDEX", on: layout.table, [(column, "")])
                default: break
                }
            }
            for constraint in entity.uniquenessConstraints {
                let columns = constraint.compactMap { column(of: $0, in: layout) }
                guard columns.count == constraint.count, !columns.isEmpty else { continue }
                index(
                    "Z_\(entity.name)_UNIQUE_\(constraint.joined(separator: "_"))", unique: true, on: layout.table,
                    columns.map { ($0, "") })
            }
            for fetchIndex in entity.indexes {
                let columns = fetchIndex.elements.compactMap { element in
                    column(of: element.property, in: layout).map { ($0, element.ascending ? "" : "DESC") }
                }
                guard columns.count == fetchIndex.elements.count, !columns.isEmpty else { continue }
                index("Z_\(entity.name)_\(fetchIndex.name)", on: layout.table, columns)
            }
        }
        for join in joinTables.values.sorted(by: { $0.name < $1.name }) {
            var columns = [
                "\(join.firstColumn.sqlName) bigint NOT NULL", "\(join.secondColumn.sqlName) bigint NOT NULL",
            ]
            if let order = join.firstOrderColumn { columns.append("\(order.sqlName) bigint") }
            if let order = join.secondOrderColumn { columns.append("\(order.sqlName) bigint") }
            columns.append("PRIMARY KEY (\(join.firstColumn.sqlName), \(join.secondColumn.sqlName))")
            sql.append("CREATE TABLE \(qualified(join.name)) (\(columns.joined(separator: ", ")))")
            index(
                "\(join.name)_\(join.secondColumn)_INDEX", on: join.name,
                [(join.secondColumn, ""), (join.firstColumn, "")])
        }
        return sql
    }

    /// The column of a stored attribute or to-one relationship named `property`, or `nil`.
    func column(of property: String, in layout: EntityLayout) -> String? {
        guard let slot = layout.entity.index(ofProperty: property) else { return nil }
        switch layout.slots[slot] {
        case .attribute(let column, _, _), .toOne(let column, _, _, _, _): return column
        default: return nil
        }
    }

    /// Every table the layout uses, `Z_PRIMARYKEY` and `Z_METADATA` included.
    var tableNames: [String] {
        ["Z_PRIMARYKEY", "Z_METADATA"] + tables.values.map(\.name).sorted() + joinTables.keys.sorted()
    }

    /// `name`, or when longer than PostgreSQL's 63 bytes, its first 46 bytes (whole characters), `_`
    /// and 16 hex digits of its SHA-256.
    static func identifier(_ name: String) -> String {
        guard name.utf8.count > PostgreSQLLocation.maximumIdentifierBytes else { return name }
        var prefix = ""
        for character in name {
            guard prefix.utf8.count + String(character).utf8.count <= 46 else { break }
            prefix.append(character)
        }
        var digest = SHA256Digest()
        digest.update(Array(name.utf8))
        return prefix + "_" + digest.finalize().prefix(8).map { String(format: "%02x", $0) }.joined()
    }
}
