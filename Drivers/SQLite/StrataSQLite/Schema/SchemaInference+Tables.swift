import Foundation
import Strata

extension SchemaInference {
    /// Columns that Core Data adds to every entity table.
    static let bookkeepingColumns: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]

    /// A to-many relationship without inverse that Core Data keeps as a foreign key `Z<n><NAME>`
    /// in its destination's table: declared on entity `n`.
    struct OwnedToMany {
        var entityNumber: Int32
        var relationship: RelationshipDescription
    }

    /// The properties read from a hierarchy root's table `table` (`Z<ROOT>`), and the to-many
    /// relationships of other entities whose foreign keys the table holds.
    static func inferTableProperties(
        root: String, table: String, entities: [String], byNumber: [Int32: PrimaryKeyEntry],
        connection: SQLiteConnection
    ) throws -> (properties: [PropertyDescription], owned: [OwnedToMany]) {
        guard try connection.tableExists(table) else { return ([], []) }
        let columns = try connection.rows("SELECT name, type FROM pragma_table_info(?) ORDER BY cid", [.text(table)])
            .compactMap { row -> (name: String, type: String)? in
                guard let name = row[0].text else { return nil }
                return (name, row[1].text ?? "")
            }
        let indexes = Set(
            try connection.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", [.text(table)])
                .compactMap { $0[0].text?.uppercased() })
        let columnNames = Set(columns.map(\.name))
        // `Z<n>_<COL>`: the entity number of the row the foreign key ZCOL points at (its destination
        // has subentities). When ZCOL is a bookkeeping column or absent, the key was renamed by the
        // name generator (relationship `_ent`: key `Z_ENT1`, entity column `Z1__ENT`): the key is
        // the first `ZCOL<k>` present, and the relationship keeps the name the entity column shows.
        var destinationNumbers: [String: Int32] = [:]
        var renamedKeys: [String: String] = [:]
        var entityColumns: Set<String> = []
        for column in columns where !column.name.hasPrefix("Z_") {
            guard let (number, target) = numberedColumn(column.name, separator: "_") else { continue }
            if columnNames.contains(target), !bookkeepingColumns.contains(target) {
                destinationNumbers[target] = number
                entityColumns.insert(column.name)
            } else if let key = (1..<100).lazy.map({ target + String($0) }).first(where: { columnNames.contains($0) }) {
                destinationNumbers[key] = number
                renamedKeys[key] = String(target.dropFirst())
                entityColumns.insert(column.name)
            }
        }
        var properties: [PropertyDescription] = []
        var owned: [OwnedToMany] = []
        for column in columns
        where !bookkeepingColumns.contains(column.name) && !isOrderColumn(column.name, among: columnNames) {
            if entityColumns.contains(column.name) { continue }
            if let name = renamedKeys[column.name], let number = destinationNumbers[column.name],
                let destination = byNumber[number]?.name
            {
                properties.append(.relationship(RelationshipDescription(name, destination: destination)))
                continue
            }
            if let (number, name) = ownedForeignKey(column.name), byNumber[number] != nil {
                let ordered = columnNames.contains("Z_FOK_" + column.name.dropFirst())
                owned.append(
                    OwnedToMany(
                        entityNumber: number,
                        relationship: RelationshipDescription(name, destination: root, toMany: true, ordered: ordered)))
                continue
            }
            let name =
                column.name.hasPrefix("Z") && column.name.count > 1 ? String(column.name.dropFirst()) : column.name
            guard ManagedObjectModel.isValidName(name) else {
                throw SQLiteError(
                    .corrupt,
                    "table \(SQLIdentifier.display(table)) has a column \(SQLIdentifier.display(column.name)) whose name is not an identifier, so it is not a column Core Data wrote; open the store with the model that wrote it (the column is then ignored)",
                    file: connection.path)
            }
            let type = attributeType(forColumnType: column.type)
            if type == .integer64 {
                var destination = destinationNumbers[column.name].flatMap { byNumber[$0]?.name }
                if destination == nil, indexes.contains("\(table)_\(column.name)_INDEX".uppercased()),
                    try holdsOnlyKeys(table: table, column: column.name, connection)
                {
                    destination = self.destination(forColumn: name, in: root, among: entities)
                }
                if let destination {
                    properties.append(.relationship(RelationshipDescription(name, destination: destination)))
                    continue
                }
            }
            properties.append(.attribute(AttributeDescription(name, type)))
        }
        return (properties, owned)
    }

    /// Whether every value of `column` could be a primary key (an integer from 1): an indexed
    /// integer column named like an entity is a foreign key only then; an indexed integer
    /// attribute (`café` beside entity `Café`) may hold 0 or less, and is read as an attribute.
    static func holdsOnlyKeys(table: String, column: String, _ connection: SQLiteConnection) throws -> Bool {
        let quoted = SQLIdentifier.quote(column)
        let other = try connection.scalar(
            "SELECT 1 FROM \(SQLIdentifier.quote(table)) WHERE \(quoted) IS NOT NULL AND (typeof(\(quoted)) != 'integer' OR \(quoted) < 1) LIMIT 1"
        )
        return other == nil || other == .null
    }

    /// Whether `column` is a `Z_FOK_<NAME>` column ordering the foreign key `Z<NAME>` beside it (a
    /// numeric suffix Core Data's name generator added dropped). Without that key it is an attribute
    /// whose name starts `_fok_` (its column is `Z` + the name, upper-cased).
    static func isOrderColumn(_ column: String, among columns: Set<String>) -> Bool {
        guard column.hasPrefix("Z_FOK_") else { return false }
        let key = "Z" + column.dropFirst("Z_FOK_".count)
        if columns.contains(key) { return true }
        let trimmed = String(key.reversed().drop(while: { $0.isASCII && $0.isNumber }).reversed())
        return trimmed != key && columns.contains(trimmed)
    }

    /// Splits Core Data's foreign key of a to-many without inverse, `Z<n><NAME>` (digits right
    /// after the `Z`, then a name that is an identifier), into `n` and `NAME`.
    static func ownedForeignKey(_ column: String) -> (Int32, String)? {
        guard column.hasPrefix("Z") else { return nil }
        let rest = column.dropFirst()
        let digits = rest.prefix(while: { $0.isASCII && $0.isNumber })
        guard !digits.isEmpty, digits.count < 9, let number = Int32(digits) else { return nil }
        let name = String(rest.dropFirst(digits.count))
        guard !name.hasPrefix("_"), ManagedObjectModel.isValidName(name) else { return nil }
        return (number, name)
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
                    toOne.append(
                        ToOne(entity: entity, index: index, name: r.name, destination: r.destinationEntityName))
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
    ///
    /// A column `Z_<n1><NAME1>` holds keys of entity `n1`: `NAME1` is the relationship of the
    /// other entity that points at `n1`. A column named like the table with a numeric suffix
    /// (`Z_19PARENTGROUPS1` in `Z_22PARENTGROUPS`) was suffixed by Core Data's name generator and
    /// names the table's relationship; a `REFLEXIVE` column pairs a relationship with itself; a
    /// `Z_FOK_` column beside a key column makes the relationship whose members it orders ordered.
    static func addManyToMany(
        _ properties: inout [String: [PropertyDescription]], byNumber: [Int32: PrimaryKeyEntry],
        parents: [String: String], connection: SQLiteConnection
    ) throws {
        let tables = try connection.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' ORDER BY name"
        ).compactMap { $0[0].text }
        for table in tables {
            guard let (_, tableName) = numberedColumn(table, separator: "") else { continue }
            let all = try connection.rows("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(table)])
                .compactMap { $0[0].text }
            let columns = all.filter { !$0.hasPrefix("Z_FOK_") && $0 != "FOK_REFLEXIVE" }
            func ordered(_ column: String) -> Bool {
                column == "REFLEXIVE" ? all.contains("FOK_REFLEXIVE") : all.contains("Z_FOK_" + column.dropFirst(2))
            }
            /// The relationship name a key column is named by, without a suffix the table's name shows
            /// (kept when another column has the table's name: then the suffix tells the two apart).
            func name(_ parsed: (Int32, String)) -> String {
                let (_, name) = parsed
                guard name != tableName, name.hasPrefix(tableName),
                    !columns.contains(where: { numberedColumn($0, separator: "")?.1 == tableName }),
                    name.dropFirst(tableName.count).allSatisfy({ $0.isASCII && $0.isNumber })
                else { return name }
                return tableName
            }
            guard columns.count == 2, let first = numberedColumn(columns[0], separator: ""),
                let firstEntity = byNumber[first.0]?.name, ManagedObjectModel.isValidName(first.1)
            else { continue }
            if columns[1] == "REFLEXIVE" {
                guard let free = available(name(first), inHierarchyOf: firstEntity, properties, parents) else {
                    continue
                }
                let relationship = RelationshipDescription(
                    free, destination: firstEntity, inverse: free, toMany: true, ordered: ordered(columns[1]))
                properties[firstEntity, default: []].append(.relationship(relationship))
                continue
            }
            guard let second = numberedColumn(columns[1], separator: ""),
                let secondEntity = byNumber[second.0]?.name,
                first.1 != second.1 || first.0 != second.0,
                // Core Data names join columns after relationships; other names make this no join table of its.
                ManagedObjectModel.isValidName(second.1)
            else { continue }
            // Column Z_<n1><NAME1> holds keys of entity n1: NAME1 is the relationship of entity n2
            // that points at n1, and NAME2 the relationship of n1 that points at n2.
            guard let secondName = available(name(second), inHierarchyOf: firstEntity, properties, parents) else {
                continue
            }
            var withForward = properties  // the second name, taken once the forward side is added
            withForward[firstEntity, default: []].append(
                .relationship(RelationshipDescription(secondName, destination: secondEntity)))
            guard let firstName = available(name(first), inHierarchyOf: secondEntity, withForward, parents) else {
                continue
            }
            let forward = RelationshipDescription(
                secondName, destination: secondEntity, inverse: firstName, toMany: true, ordered: ordered(columns[1]))
            let backward = RelationshipDescription(
                firstName, destination: firstEntity, inverse: secondName, toMany: true, ordered: ordered(columns[0]))
            properties[firstEntity, default: []].append(.relationship(forward))
            properties[secondEntity, default: []].append(.relationship(backward))
        }
    }

    /// A name for a new property of `entity` that reads the same tables and columns as `name`:
    /// `name` itself, or when the hierarchy already uses it, `name` with its ASCII letters in
    /// another case (all lower, then the first upper). Core Data's SQL names upper-case ASCII
    /// letters, so the variants name the same join table and columns, and a relationship named
    /// like an attribute after upper-casing (attribute `label` in `ZLABEL`, relationship `Label`
    /// in `Z_3LABEL`) gets a name of its own. `nil` when every variant is taken.
    static func available(
        _ name: String, inHierarchyOf entity: String, _ properties: [String: [PropertyDescription]],
        _ parents: [String: String]
    ) -> String? {
        let taken = names(inHierarchyOf: entity, properties, parents)
        func ascii(_ text: Substring, upper: Bool) -> String {
            String(
                String.UnicodeScalarView(
                    text.unicodeScalars.map { scalar -> Unicode.Scalar in
                        guard scalar.isASCII else { return scalar }
                        let value = UInt8(scalar.value)
                        if upper, (0x61...0x7A).contains(value) { return Unicode.Scalar(value - 0x20) }
                        if !upper, (0x41...0x5A).contains(value) { return Unicode.Scalar(value + 0x20) }
                        return scalar
                    }))
        }
        let lower = ascii(Substring(name), upper: false)
        let capitalized = ascii(lower.prefix(1), upper: true) + lower.dropFirst()
        return [name, lower, capitalized].first { !taken.contains($0) }
    }

    /// Every property name `entity` or one of its subentities has or inherits: the names a new
    /// property of `entity` must not take (siblings may declare the same name).
    static func names(
        inHierarchyOf entity: String, _ properties: [String: [PropertyDescription]], _ parents: [String: String]
    ) -> Set<String> {
        /// `name` and its ancestors (bounded, so a cycle in `Z_PRIMARYKEY` ends it; the model refuses it later).
        func chain(_ name: String) -> [String] {
            var chain = [name]
            while let parent = parents[chain[chain.count - 1]], chain.count <= parents.count + 1 {
                chain.append(parent)
            }
            return chain
        }
        let ancestors = chain(entity)
        var names: Set<String> = []
        for (name, list) in properties where ancestors.contains(name) || chain(name).contains(entity) {
            names.formUnion(list.map(\.name))
        }
        return names
    }
}
