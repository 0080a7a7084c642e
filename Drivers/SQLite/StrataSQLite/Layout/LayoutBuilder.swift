import Foundation
import Strata

/// Computes a ``StoreLayout``: table and column names the way Core Data names them, matched
/// against an existing store's columns when there is one.
struct LayoutBuilder {
    let model: ManagedObjectModel
    /// Model entity number → store `Z_ENT`.
    let storeNumbers: [Int32: Int32]
    /// Existing tables' columns (after `Z_PK, Z_ENT, Z_OPT`), by table name; `nil` for a new store.
    let existingColumns: [String: [String]]?
    let existingTables: Set<String>?

    var tables: [String: TableLayout] = [:]
    var entityLayouts: [Int32: EntityLayout] = [:]
    var joinTables: [String: JoinTable] = [:]
    /// "Entity.property" (declaring entity) → column name.
    private var columns: [String: String] = [:]
    private var entityColumns: [String: String] = [:]
    private var joins: [String: JoinToMany] = [:]

    init(
        model: ManagedObjectModel, storeNumbers: [Int32: Int32], existingColumns: [String: [String]]?,
        existingTables: Set<String>?
    ) {
        self.model = model
        self.storeNumbers = storeNumbers
        self.existingColumns = existingColumns
        self.existingTables = existingTables
    }

    /// The declared SQL type of an attribute's column, and its creation-order group.
    static func columnType(_ type: AttributeType) -> (String, Int) {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: ("INTEGER", 0)
        case .double, .float: ("FLOAT", 1)
        case .date: ("TIMESTAMP", 1)
        case .decimal: ("DECIMAL", 1)
        case .string, .uri: ("VARCHAR", 2)
        default: ("BLOB", 3)
        }
    }

    private func number(_ entity: EntityDescription) -> Int32 { storeNumbers[entity.entityNumber] ?? entity.entityNumber }

    /// The entity declaring `property` as seen from `entity` (itself or an ancestor).
    func declaringEntity(of property: String, from entity: EntityDescription) -> EntityDescription {
        var current = entity
        while !current.ownProperties.contains(where: { $0.name == property }), let parent = current.superentityName,
            let next = model.entity(named: parent)
        {
            current = next
        }
        return current
    }

    mutating func build(_ included: [EntityDescription]) {
        let rootNames = Set(included.map(\.rootEntityName))
        let roots = model.entities.filter { rootNames.contains($0.name) }.sorted { $0.entityNumber < $1.entityNumber }
        for root in roots { buildTable(root) }
        for root in roots { addOrderColumns(root) }
        if existingColumns == nil {
            // Core Data's creation order: INTEGER columns, then FLOAT/TIMESTAMP/DECIMAL, VARCHAR, BLOB.
            for (name, table) in tables {
                var ordered = table
                ordered.columns = table.columns.enumerated().sorted { ($0.element.group, $0.offset) < ($1.element.group, $1.offset) }
                    .map(\.element)
                tables[name] = ordered
            }
        }
        for root in roots {
            for entity in hierarchy(of: root) { addJoinTables(entity) }
        }
        for root in roots {
            for entity in hierarchy(of: root) { entityLayouts[entity.entityNumber] = layout(of: entity) }
        }
    }

    private func hierarchy(of root: EntityDescription) -> [EntityDescription] {
        model.entities.filter { $0.rootEntityName == root.name }.sorted { $0.entityNumber < $1.entityNumber }
    }

    private func storedName(_ entity: EntityDescription) -> String {
        // An existing store may still call a renamed root by its old name.
        if let existingTables, !existingTables.contains("Z" + entity.name.uppercased()),
            let old = entity.renamingIdentifier, existingTables.contains("Z" + old.uppercased())
        {
            return old
        }
        return entity.name
    }

    private mutating func buildTable(_ root: EntityDescription) {
        let name = "Z" + storedName(root).uppercased()
        var table = TableLayout(name: name, root: root.name, columns: [])
        var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
        let existing = existingColumns?[name]
        func allocate(_ property: String, renamed: String?) -> String {
            var candidate = "Z" + property.uppercased()
            var suffix = 1
            while used.contains(candidate) {
                candidate = "Z" + property.uppercased() + "\(suffix)"
                suffix += 1
            }
            if let existing, !existing.contains(candidate), let renamed, existing.contains("Z" + renamed.uppercased()),
                !used.contains("Z" + renamed.uppercased())
            {
                candidate = "Z" + renamed.uppercased()
            }
            used.insert(candidate)
            return candidate
        }
        for entity in hierarchy(of: root) {
            for property in entity.ownProperties where !property.isTransient {
                let key = "\(entity.name).\(property.name)"
                switch property {
                case .attribute(let attribute):
                    let column = allocate(attribute.name, renamed: attribute.renamingIdentifier)
                    let (type, group) = Self.columnType(attribute.type)
                    table.columns.append(.init(name: column, type: type, group: group))
                    columns[key] = column
                case .relationship(let relationship) where !relationship.isToMany:
                    let column = allocate(relationship.name, renamed: relationship.renamingIdentifier)
                    table.columns.append(.init(name: column, type: "INTEGER", group: 0))
                    columns[key] = column
                    if let destination = model.entity(named: relationship.destinationEntityName),
                        !destination.subentityNames.isEmpty
                    {
                        let entityColumn = "Z\(number(destination))_" + column.dropFirst()
                        table.columns.append(.init(name: entityColumn, type: "INTEGER", group: 0))
                        entityColumns[key] = entityColumn
                        used.insert(entityColumn)
                    }
                default: continue
                }
            }
        }
        if let existing {
            let missing = Set(table.columns.map(\.name)).subtracting(existing)
            table.missing = missing
            table.columns.removeAll { missing.contains($0.name) }
        }
        tables[root.name] = table
    }

    /// Adds `Z_FOK_<REL>` columns for ordered one-to-many relationships declared in `root`'s hierarchy.
    private mutating func addOrderColumns(_ root: EntityDescription) {
        for entity in hierarchy(of: root) {
            for case .relationship(let relationship) in entity.ownProperties
            where relationship.isToMany && relationship.isOrdered && !relationship.isTransient {
                guard let (column, tableRoot) = inverseForeignKey(of: relationship) else { continue }
                let order = "Z_FOK_" + column.dropFirst()
                guard var table = tables[tableRoot], !table.columns.contains(where: { $0.name == order }) else { continue }
                if let existing = existingColumns?[table.name], !existing.contains(order) {
                    table.missing.insert(order)
                } else {
                    let position = (table.columns.firstIndex { $0.name == column } ?? table.columns.count - 1) + 1
                    table.columns.insert(.init(name: order, type: "INTEGER", group: 0), at: position)
                }
                tables[tableRoot] = table
            }
        }
    }

    /// The inverse to-one's foreign-key column of a to-many relationship, and the root holding it.
    private func inverseForeignKey(of relationship: RelationshipDescription) -> (String, String)? {
        guard let inverseName = relationship.inverseName,
            let destination = model.entity(named: relationship.destinationEntityName),
            let inverse = destination.property(named: inverseName)?.relationship, !inverse.isToMany
        else { return nil }
        let declaring = declaringEntity(of: inverseName, from: destination)
        guard let column = columns["\(declaring.name).\(inverseName)"], tables[destination.rootEntityName] != nil
        else { return nil }
        return (column, destination.rootEntityName)
    }

    private mutating func addJoinTables(_ entity: EntityDescription) {
        for case .relationship(let relationship) in entity.ownProperties
        where relationship.isToMany && !relationship.isTransient {
            let key = "\(entity.name).\(relationship.name)"
            guard joins[key] == nil, inverseForeignKey(of: relationship) == nil,
                let destination = model.entity(named: relationship.destinationEntityName),
                tables[destination.rootEntityName] != nil
            else { continue }
            let inverse = relationship.inverseName.flatMap { destination.property(named: $0)?.relationship }
            let memberColumn = "Z_\(number(destination))" + relationship.name.uppercased()
            guard let inverse, inverse.isToMany else {
                // No inverse: a join table of this relationship alone.
                let table = "Z_\(number(entity))" + relationship.name.uppercased()
                let source = "Z_\(number(entity))" + relationship.name.uppercased() + "INVERSE"
                let order = relationship.isOrdered ? "Z_FOK_" + memberColumn.dropFirst(2) : nil
                joinTables[table] = JoinTable(
                    name: table, firstColumn: source, secondColumn: memberColumn, secondOrderColumn: order)
                joins[key] = JoinToMany(
                    table: table, sourceColumn: source, memberColumn: memberColumn, orderColumn: order,
                    destinationTable: tables[destination.rootEntityName]!.name)  // checked above
                continue
            }
            let inverseOwner = declaringEntity(of: inverse.name, from: destination)
            let inverseKey = "\(inverseOwner.name).\(inverse.name)"
            let sourceColumn = "Z_\(number(entity))" + inverse.name.uppercased()
            // The table is named after the relationship declared on the entity with the lower number.
            let thisFirst = (number(entity), relationship.name) <= (number(inverseOwner), inverse.name)
            var named = thisFirst ? (relationship, entity) : (inverse, inverseOwner)
            var tableName = "Z_\(number(named.1))" + named.0.name.uppercased()
            let otherName = "Z_\(number(thisFirst ? inverseOwner : entity))" + (thisFirst ? inverse : relationship).name.uppercased()
            if let existingTables, !existingTables.contains(tableName), existingTables.contains(otherName) {
                tableName = otherName
                named = thisFirst ? (inverse, inverseOwner) : (relationship, entity)
            }
            let thisOrder = relationship.isOrdered ? "Z_FOK_" + memberColumn.dropFirst(2) : nil
            let inverseOrder = inverse.isOrdered ? "Z_FOK_" + sourceColumn.dropFirst(2) : nil
            // First column: keys of the named relationship's owner; second: its members.
            let namedIsThis = named.0.name == relationship.name && named.1 === entity
            joinTables[tableName] = namedIsThis
                ? JoinTable(name: tableName, firstColumn: sourceColumn, secondColumn: memberColumn,
                    secondOrderColumn: thisOrder, firstOrderColumn: inverseOrder)
                : JoinTable(name: tableName, firstColumn: memberColumn, secondColumn: sourceColumn,
                    secondOrderColumn: inverseOrder, firstOrderColumn: thisOrder)
            joins[key] = JoinToMany(
                table: tableName, sourceColumn: sourceColumn, memberColumn: memberColumn, orderColumn: thisOrder,
                destinationTable: tables[destination.rootEntityName]!.name)  // checked above
            if let sourceRoot = tables[entity.rootEntityName] {
                joins[inverseKey] = JoinToMany(
                    table: tableName, sourceColumn: memberColumn, memberColumn: sourceColumn, orderColumn: inverseOrder,
                    destinationTable: sourceRoot.name)
            }
        }
    }

    private func layout(of entity: EntityDescription) -> EntityLayout {
        // Every entity in `build` belongs to a hierarchy whose table was built first.
        let table = tables[entity.rootEntityName]!
        var slots: [SlotLayout] = []
        for property in entity.properties {
            guard !property.isTransient else {
                slots.append(.none)
                continue
            }
            let owner = declaringEntity(of: property.name, from: entity)
            let key = "\(owner.name).\(property.name)"
            switch property {
            case .attribute(let attribute):
                guard let column = columns[key], !table.missing.contains(column),
                    let index = table.selectIndex(of: column)
                else { slots.append(.missing); continue }
                slots.append(.attribute(column: column, index: index, type: attribute.type))
            case .relationship(let relationship) where !relationship.isToMany:
                guard let column = columns[key], !table.missing.contains(column),
                    let index = table.selectIndex(of: column),
                    let destination = model.entity(named: relationship.destinationEntityName)
                else { slots.append(.missing); continue }
                let entityColumn = entityColumns[key].flatMap { table.missing.contains($0) ? nil : $0 }
                slots.append(
                    .toOne(column: column, index: index, entityColumn: entityColumn,
                        entityIndex: entityColumn.flatMap { table.selectIndex(of: $0) },
                        destination: destination.entityNumber))
            case .relationship(let relationship):
                if let (column, root) = inverseForeignKey(of: relationship), let destinationTable = tables[root],
                    let destination = model.entity(named: relationship.destinationEntityName)
                {
                    let order = relationship.isOrdered ? "Z_FOK_" + column.dropFirst() : nil
                    guard !destinationTable.missing.contains(column) else { slots.append(.missing); continue }
                    slots.append(
                        .toManyForeignKey(
                            ForeignKeyToMany(
                                table: destinationTable.name, column: column,
                                destinationNumbers: destination.hierarchyNumbers.map(number(_:)).sorted(),
                                orderColumn: order.flatMap { destinationTable.missing.contains($0) ? nil : $0 })))
                } else if let join = joins[key] {
                    if let existingTables, !existingTables.contains(join.table) {
                        slots.append(.missing)
                    } else {
                        slots.append(.toManyJoin(join))
                    }
                } else {
                    slots.append(.missing)
                }
            }
        }
        return EntityLayout(
            entity: entity, storeNumber: number(entity), table: table.name, slots: slots)
    }

    private func number(_ entityNumber: Int32) -> Int32 { storeNumbers[entityNumber] ?? entityNumber }
}
