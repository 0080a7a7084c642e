import Foundation
import Strata

extension SchemaInference {
    /// Columns that Core Data adds to every entity table.
    static let bookkeepingColumns: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]

    /// The properties read from a hierarchy root's table `Z<ROOT>`.
    static func inferTableProperties(
        root: String, entities: [String], byNumber: [Int32: PrimaryKeyEntry], connection: SQLiteConnection
    ) throws -> [PropertyDescription] {
        let table = "Z" + root.uppercased()
        guard try connection.tableExists(table) else { return [] }
        let columns = try connection.rows("SELECT name, type FROM pragma_table_info(?) ORDER BY cid", [.text(table)])
            .compactMap { row -> (name: String, type: String)? in
                guard let name = row[0].text else { return nil }
                return (name, row[1].text ?? "")
            }
        let indexes = Set(
            try connection.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", [.text(table)])
                .compactMap { $0[0].text?.uppercased() })
        // `Z<n>_<COL>`: the entity number of the row ZCOL points at (its destination has subentities).
        var destinationNumbers: [String: Int32] = [:]
        for column in columns where !column.name.hasPrefix("Z_") {
            if let (number, name) = numberedColumn(column.name, separator: "_") { destinationNumbers[name] = number }
        }
        let columnNames = Set(columns.map(\.name))
        var properties: [PropertyDescription] = []
        for column in columns where !bookkeepingColumns.contains(column.name) && !column.name.hasPrefix("Z_") {
            if let (_, target) = numberedColumn(column.name, separator: "_"), columnNames.contains(target) { continue }
            let name = column.name.hasPrefix("Z") && column.name.count > 1 ? String(column.name.dropFirst()) : column.name
            guard ManagedObjectModel.isValidName(name) else {
                throw SQLiteError(
                    .corrupt,
                    "table \(SQLIdentifier.display(table)) has a column \(SQLIdentifier.display(column.name)) whose name is not an identifier, so it is not a column Core Data wrote; open the store with the model that wrote it (the column is then ignored)",
                    file: connection.path)
            }
            let type = attributeType(forColumnType: column.type)
            if type == .integer64 {
                var destination = destinationNumbers[column.name].flatMap { byNumber[$0]?.name }
                if destination == nil, indexes.contains("\(table)_\(column.name)_INDEX".uppercased()) {
                    destination = self.destination(forColumn: name, in: root, among: entities)
                }
                if let destination {
                    properties.append(.relationship(RelationshipDescription(name, destination: destination)))
                    continue
                }
            }
            properties.append(.attribute(AttributeDescription(name, type)))
        }
        return properties
    }

    /// Splits an entity-number column `Z<n>_<NAME>` (separator `_`) into `n` and `Z<NAME>`, or a
    /// join-table name or column `Z_<n><NAME>` (empty separator) into `n` and `NAME`.
    static func numberedColumn(_ column: String, separator: String) -> (Int32, String)? {
        let start = separator.isEmpty ? "Z_" : "Z"
        guard column.hasPrefix(start) else { return nil }
        let rest = column.dropFirst(start.count)
        let digits = rest.prefix(while: { $0.isASCII && $0.isNumber })
        guard !digits.isEmpty, digits.count < 9, let number = Int32(digits) else { return nil }
        var name = rest.dropFirst(digits.count)
        if !separator.isEmpty {
            guard name.hasPrefix(separator) else { return nil }
            name = name.dropFirst(separator.count)
            return name.isEmpty ? nil : (number, "Z" + name)
        }
        return name.isEmpty ? nil : (number, String(name))
    }

    /// Makes to-one relationships that point at each other's entities inverses, when they pair up
    /// unambiguously: the only pair between two entities, or names that extend each other
    /// (`KikChat.DRAFTMESSAGE` ↔ `KikMessage.DRAFTMESSAGECHAT`).
    static func pairOneToOneInverses(_ properties: inout [String: [PropertyDescription]]) {
        struct ToOne { var entity: String, index: Int, name: String, destination: String }
        var toOne: [ToOne] = []
        for entity in properties.keys.sorted() {
            for (index, property) in (properties[entity] ?? []).enumerated() {
                if let r = property.relationship, !r.isToMany {
                    toOne.append(ToOne(entity: entity, index: index, name: r.name, destination: r.destinationEntityName))
                }
            }
        }
        func related(_ a: String, _ b: String) -> Bool { a.hasPrefix(b) || b.hasPrefix(a) }
        func partner(of a: ToOne) -> ToOne? {
            let back = toOne.filter { $0.entity == a.destination && $0.destination == a.entity && $0.name != a.name }
            let forth = toOne.filter { $0.entity == a.entity && $0.destination == a.destination && $0.name != a.name }
            if a.entity != a.destination, back.count == 1, forth.isEmpty { return back[0] }
            let named = back.filter { related($0.name, a.name) }
            guard named.count == 1 else { return nil }
            let rivals = forth.filter { related($0.name, named[0].name) }
            return rivals.isEmpty ? named[0] : nil
        }
        for a in toOne {
            guard let b = partner(of: a), let back = partner(of: b), back.entity == a.entity, back.name == a.name,
                var ra = properties[a.entity]?[a.index].relationship, ra.inverseName == nil,
                var rb = properties[b.entity]?[b.index].relationship, rb.inverseName == nil
            else { continue }
            ra.inverseName = b.name
            rb.inverseName = a.name
            properties[a.entity]?[a.index] = .relationship(ra)
            properties[b.entity]?[b.index] = .relationship(rb)
        }
    }

    /// Adds the many-to-many relationship pairs that join tables `Z_<n><NAME>` record.
    static func addManyToMany(
        _ properties: inout [String: [PropertyDescription]], byNumber: [Int32: PrimaryKeyEntry],
        parents: [String: String], connection: SQLiteConnection
    ) throws {
        let tables = try connection.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' ORDER BY name"
        ).compactMap { $0[0].text }
        for table in tables where numberedColumn(table, separator: "") != nil {
            let columns = try connection.rows("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(table)])
                .compactMap { $0[0].text }.filter { !$0.hasPrefix("Z_FOK_") }
            guard columns.count == 2, let first = numberedColumn(columns[0], separator: ""),
                let second = numberedColumn(columns[1], separator: ""),
                let firstEntity = byNumber[first.0]?.name, let secondEntity = byNumber[second.0]?.name,
                first.1 != second.1 || first.0 != second.0,
                // Core Data names join columns after relationships; other names make this no join table of its.
                ManagedObjectModel.isValidName(first.1), ManagedObjectModel.isValidName(second.1)
            else { continue }
            // Column Z_<n1><NAME1> holds keys of entity n1: NAME1 is the relationship of entity n2
            // that points at n1, and NAME2 the relationship of n1 that points at n2.
            let forward = RelationshipDescription(second.1, destination: secondEntity, inverse: first.1, toMany: true)
            let backward = RelationshipDescription(first.1, destination: firstEntity, inverse: second.1, toMany: true)
            guard !names(inHierarchyOf: firstEntity, properties, parents).contains(forward.name),
                !names(inHierarchyOf: secondEntity, properties, parents).contains(backward.name)
            else { continue }
            properties[firstEntity, default: []].append(.relationship(forward))
            properties[secondEntity, default: []].append(.relationship(backward))
        }
    }

    /// Every property name declared anywhere in the hierarchy that holds `entity`.
    static func names(
        inHierarchyOf entity: String, _ properties: [String: [PropertyDescription]], _ parents: [String: String]
    ) -> Set<String> {
        func root(of name: String) -> String {
            var current = name
            var steps = 0
            while let parent = parents[current], steps <= parents.count {
                current = parent
                steps += 1
            }
            return current
        }
        let hierarchy = root(of: entity)
        var names: Set<String> = []
        for (name, list) in properties where root(of: name) == hierarchy { names.formUnion(list.map(\.name)) }
        return names
    }
}
