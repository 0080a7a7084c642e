import Foundation
import Strata

extension StoreLayout {
    /// The statements that create a new store's tables and indexes, `Z_PRIMARYKEY` rows and the
    /// `Z_METADATA` table (its row is written separately).
    func creationStatements() -> [String] {
        [
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
        ] + schemaObjects().map(\.sql)
    }

    /// A table or index of the layout and the statement that creates it.
    struct SchemaObject {
        var isIndex: Bool
        var name: String
        /// The table an index is on (the table itself for a table).
        var table: String
        var sql: String
    }

    /// The entity tables, join tables and indexes of the layout, in creation order.
    func schemaObjects() -> [SchemaObject] {
        var sql: [SchemaObject] = []
        var indexNames: Set<String> = []
        /// `columns` are (name, suffix) pairs: the suffix (`COLLATE BINARY ASC`) is the driver's own text.
        /// `entities`, when given, limits the index to rows of those store entity numbers (a partial index).
        func index(
            _ name: String, unique: Bool = false, on table: String, _ columns: [(String, String)],
            entities: [Int32]? = nil
        ) {
            guard indexNames.insert(name).inserted else { return }
            let list = columns.map { $0.1.isEmpty ? $0.0.sqlName : "\($0.0.sqlName) \($0.1)" }
            let rows = entities.map { " WHERE Z_ENT IN (\($0.map(String.init).joined(separator: ", ")))" } ?? ""
            sql.append(
                SchemaObject(
                    isIndex: true, name: name, table: table,
                    sql:
                        "CREATE \(unique ? "UNIQUE " : "")INDEX \(name.sqlName) ON \(table.sqlName) (\(list.joined(separator: ", ")))\(rows)"
                ))
        }
        for table in tables.values.sorted(by: { $0.name < $1.name }) {
            // Column types are the driver's constants (LayoutBuilder.columnType), never read from a store.
            let columns =
                ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"]
                + table.columns.map { "\($0.name.sqlName) \($0.type)" }
            sql.append(
                SchemaObject(
                    isIndex: false, name: table.name, table: table.name,
                    sql: "CREATE TABLE \(table.name.sqlName) ( \(columns.joined(separator: ", ")) )"))
        }
        for layout in entities.values.sorted(by: { $0.storeNumber < $1.storeNumber }) {
            let entity = layout.entity
            let isOwnHierarchyRoot = entity.superentityName == nil
            if isOwnHierarchyRoot, entity.hierarchyNumbers.count > 1 {
                index("\(layout.table)_Z_ENT_INDEX", on: layout.table, [("Z_ENT", "")])
            }
            let own = Set(entity.ownProperties.map(\.name))
            for (slot, property) in zip(layout.slots, entity.properties)
            where own.contains(String(property.name.prefix { $0 != "." })) {  // elements: their composite's name
                switch slot {
                case .toOne(let column, _, _, _, _):
                    index("\(layout.table)_\(column)_INDEX", on: layout.table, [(column, "")])
                case .attribute(let column, _, _) where property.attribute?.isIndexed == true:
                    index("\(layout.table)_\(column)_INDEX", on: layout.table, [(column, "")])
                default: break
                }
            }
            // A subentity's constraint holds among its own rows and its descendants', not among the
            // other rows of the hierarchy's table: a partial index over those entities (Strata's choice).
            let scope =
                isOwnHierarchyRoot ? nil : entity.hierarchyNumbers.compactMap { entities[$0]?.storeNumber }.sorted()
            for constraint in entity.uniquenessConstraints {
                let columns = constraint.compactMap { column(of: $0, in: layout) }
                guard columns.count == constraint.count, !columns.isEmpty else { continue }
                index(
                    "Z_\(entity.name)_UNIQUE_\(constraint.joined(separator: "_"))", unique: true, on: layout.table,
                    columns.map { ($0, "COLLATE BINARY ASC") }, entities: scope)
            }
            for fetchIndex in entity.indexes {
                let columns = fetchIndex.elements.compactMap { element in
                    column(of: element.property, in: layout).map {
                        ($0, "COLLATE BINARY \(element.ascending ? "ASC" : "DESC")")
                    }
                }
                guard columns.count == fetchIndex.elements.count, !columns.isEmpty else { continue }
                index("Z_\(entity.name)_\(fetchIndex.name)", on: layout.table, columns)
            }
        }
        for join in joinTables.values.sorted(by: { $0.name < $1.name }) {
            var columns = ["\(join.firstColumn.sqlName) INTEGER", "\(join.secondColumn.sqlName) INTEGER"]
            if let order = join.firstOrderColumn { columns.append("\(order.sqlName) INTEGER") }
            if let order = join.secondOrderColumn { columns.append("\(order.sqlName) INTEGER") }
            columns.append("PRIMARY KEY (\(join.firstColumn.sqlName), \(join.secondColumn.sqlName))")
            sql.append(
                SchemaObject(
                    isIndex: false, name: join.name, table: join.name,
                    sql: "CREATE TABLE \(join.name.sqlName) ( \(columns.joined(separator: ", ")) )"))
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

    /// The names of the entities whose storage the store does not match, for an existing store
    /// that Strata did not write (no Strata version hashes in its metadata).
    ///
    /// An entity differs when the store has no `Z_PRIMARYKEY` row for it (by name or renaming
    /// identifier), lacks a column or join table it needs, or declares a column with another type;
    /// a store entity the model does not have differs too.
    func differingEntities(storeEntities: [PrimaryKeyEntry], columnTypes: [String: [String: String]]) -> [String] {
        var differing: Set<String> = []
        for layout in entities.values {
            let entity = layout.entity
            if !storeEntities.contains(where: { $0.entityNumber == layout.storeNumber && $0.isModelEntity }) {
                differing.insert(entity.name)
                continue
            }
            guard let types = columnTypes[layout.table] else {
                differing.insert(entity.name)
                continue
            }
            for slot in layout.slots {
                switch slot {
                case .missing: differing.insert(entity.name)
                case .attribute(let column, _, let type):
                    let declared = types[column]?.uppercased() ?? ""
                    if !Self.compatible(declared: declared, expected: LayoutBuilder.columnType(type).0) {
                        differing.insert(entity.name)
                    }
                default: break
                }
            }
        }
        let known = Set(entities.values.map(\.storeNumber))
        for entry in storeEntities where entry.isModelEntity && !known.contains(entry.entityNumber) {
            if model.entity(named: entry.name) == nil,
                !model.entities.contains(where: { $0.renamingIdentifier == entry.name })
            {
                differing.insert(entry.name)
            }
        }
        return differing.sorted()
    }

    private static func compatible(declared: String, expected: String) -> Bool {
        if declared == expected { return true }
        switch expected {
        case "INTEGER": return declared.contains("INT")
        case "FLOAT": return declared.contains("FLOA") || declared.contains("DOUB") || declared.contains("REAL")
        case "VARCHAR": return declared.contains("CHAR") || declared.contains("TEXT")
        default: return false
        }
    }
}
