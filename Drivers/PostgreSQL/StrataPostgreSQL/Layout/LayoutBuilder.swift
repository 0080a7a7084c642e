import Foundation
import Strata

/// Computes a ``StoreLayout``: table and column names the way Core Data names them in its SQLite
/// stores, so that a store converted from SQLite keeps its tables, columns and keys.
///
/// PostgreSQL keeps only 63 bytes of a name; a longer one is shortened the same way every time
/// (``StoreLayout/identifier(_:)``: a prefix and a hash of the whole name), where it is made.
struct LayoutBuilder {
    let model: ManagedObjectModel
    let schema: String

    var tables: [String: TableLayout] = [:]
    var entityLayouts: [Int32: EntityLayout] = [:]
    var joinTables: [String: JoinTable] = [:]
    /// "Entity.property" (declaring entity) → column name.
    private var columns: [String: String] = [:]
    private var entityColumns: [String: String] = [:]
    private var joins: [String: JoinToMany] = [:]

    init(model: ManagedObjectModel, schema: String) {
        self.model = model
        self.schema = schema
    }

    /// The entity declaring `property` as seen from `entity` (itself or an ancestor).
    func declaringEntity(of property: String, from entity: EntityDescription) -> EntityDescription {
        // A composite's element (`location.latitude`) is declared where its composite is.
        let declared = property.firstIndex(of: ".").map { String(property[..<$0]) } ?? property
        var current = entity
        while !current.ownProperties.contains(where: { $0.name == declared }), let parent = current.superentityName,
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
        // Core Data's creation order: integers, then numbers and dates, text, binary.
        for (name, table) in tables {
            var ordered = table
            ordered.columns = table.columns.enumerated()
                .sorted { ($0.element.kind.group, $0.offset) < ($1.element.kind.group, $1.offset) }.map(\.element)
            tables[name] = ordered
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

    private mutating func buildTable(_ root: EntityDescription) {
        let name = StoreLayout.identifier("Z" + root.name.uppercased())
        var table = TableLayout(name: name, root: root.name, columns: [])
        var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
        func allocate(_ property: String) -> String {
            var candidate = "Z" + property.uppercased()
            var suffix = 1
            while used.contains(candidate) {
                candidate = "Z" + property.uppercased() + "\(suffix)"
                suffix += 1
            }
            used.insert(candidate)
            return StoreLayout.identifier(candidate)
        }
        for entity in hierarchy(of: root) {
            for property in entity.ownProperties where !property.isTransient {
                let key = "\(entity.name).\(property.name)"
                switch property {
                case .attribute(let attribute) where attribute.isComposite:
                    // As in SQLite (docs/formats/sqlite.md): one column per leaf element, named
                    // from the element's own name like any attribute.
                    for (path, element) in attribute.leafElements {
                        let column = allocate(element.name)
                        table.columns.append(.init(name: column, kind: .attribute(element.type)))
                        columns["\(key).\(path)"] = column
                    }
                case .attribute(let attribute):
                    let column = allocate(attribute.name)
                    table.columns.append(.init(name: column, kind: .attribute(attribute.type)))
                    columns[key] = column
                case .relationship(let relationship) where !relationship.isToMany:
                    let column = allocate(relationship.name)
                    table.columns.append(.init(name: column, kind: .key))
                    columns[key] = column
                    if let destination = model.entity(named: relationship.destinationEntityName),
                        !destination.subentityNames.isEmpty
                    {
                        let entityColumn = StoreLayout.identifier("Z\(destination.entityNumber)_" + column.dropFirst())
                        table.columns.append(.init(name: entityColumn, kind: .entityNumber))
                        entityColumns[key] = entityColumn
                        used.insert(entityColumn)
                    }
                default: continue
                }
            }
        }
        tables[root.name] = table
    }

    /// Adds `Z_FOK_<REL>` columns for ordered one-to-many relationships declared in `root`'s hierarchy.
    private mutating func addOrderColumns(_ root: EntityDescription) {
        for entity in hierarchy(of: root) {
            for case .relationship(let relationship) in entity.ownProperties
            where relationship.isToMany && relationship.isOrdered && !relationship.isTransient {
                guard let (column, tableRoot) = inverseForeignKey(of: relationship) else { continue }
                let order = StoreLayout.identifier("Z_FOK_" + column.dropFirst())
                guard var table = tables[tableRoot], !table.columns.contains(where: { $0.name == order }) else {
                    continue
                }
                let position = (table.columns.firstIndex { $0.name == column } ?? table.columns.count - 1) + 1
                table.columns.insert(.init(name: order, kind: .counter), at: position)
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
                let destinationTable = tables[destination.rootEntityName]
            else { continue }
            let inverse = relationship.inverseName.flatMap { destination.property(named: $0)?.relationship }
            let memberColumn = StoreLayout.identifier("Z_\(destination.entityNumber)" + relationship.name.uppercased())
            guard let inverse, inverse.isToMany else {
                // No inverse: a join table of this relationship alone.
                let table = StoreLayout.identifier("Z_\(entity.entityNumber)" + relationship.name.uppercased())
                let source = StoreLayout.identifier(
                    "Z_\(entity.entityNumber)" + relationship.name.uppercased() + "INVERSE")
                let order = relationship.isOrdered ? StoreLayout.identifier("Z_FOK_" + memberColumn.dropFirst(2)) : nil
                joinTables[table] = JoinTable(
                    name: table, firstColumn: source, secondColumn: memberColumn, secondOrderColumn: order)
                joins[key] = JoinToMany(
                    table: table, sourceColumn: source, memberColumn: memberColumn, orderColumn: order,
                    destinationTable: destinationTable.name)
                continue
            }
            let inverseOwner = declaringEntity(of: inverse.name, from: destination)
            let inverseKey = "\(inverseOwner.name).\(inverse.name)"
            let sourceColumn = StoreLayout.identifier("Z_\(entity.entityNumber)" + inverse.name.uppercased())
            if inverseKey == key {
                // Its own inverse (`friends`): Core Data's table `Z_<e>FRIENDS` holds the owners in
                // `Z_<e>FRIENDS` and the members in `REFLEXIVE` (their order in `FOK_REFLEXIVE`);
                // each pair is stored once per side.
                let order = relationship.isOrdered ? "FOK_REFLEXIVE" : nil
                joinTables[sourceColumn] = JoinTable(
                    name: sourceColumn, firstColumn: sourceColumn, secondColumn: "REFLEXIVE", secondOrderColumn: order)
                joins[key] = JoinToMany(
                    table: sourceColumn, sourceColumn: sourceColumn, memberColumn: "REFLEXIVE", orderColumn: order,
                    destinationTable: destinationTable.name, isReflexive: true)
                continue
            }
            // The table is named after the relationship declared on the entity with the lower number.
            let thisFirst = (entity.entityNumber, relationship.name) <= (inverseOwner.entityNumber, inverse.name)
            let named = thisFirst ? (relationship, entity) : (inverse, inverseOwner)
            let tableName = StoreLayout.identifier("Z_\(named.1.entityNumber)" + named.0.name.uppercased())
            let thisOrder = relationship.isOrdered ? StoreLayout.identifier("Z_FOK_" + memberColumn.dropFirst(2)) : nil
            let inverseOrder = inverse.isOrdered ? StoreLayout.identifier("Z_FOK_" + sourceColumn.dropFirst(2)) : nil
            // First column: keys of the named relationship's owner; second: its members.
            joinTables[tableName] =
                thisFirst
                ? JoinTable(
                    name: tableName, firstColumn: sourceColumn, secondColumn: memberColumn,
                    secondOrderColumn: thisOrder, firstOrderColumn: inverseOrder)
                : JoinTable(
                    name: tableName, firstColumn: memberColumn, secondColumn: sourceColumn,
                    secondOrderColumn: inverseOrder, firstOrderColumn: thisOrder)
            joins[key] = JoinToMany(
                table: tableName, sourceColumn: sourceColumn, memberColumn: memberColumn, orderColumn: thisOrder,
                destinationTable: destinationTable.name)
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
                guard let column = columns[key], let index = table.selectIndex(of: column) else {
                    slots.append(.none)
                    continue
                }
                slots.append(.attribute(column: column, index: index, type: attribute.type))
            case .relationship(let relationship) where !relationship.isToMany:
                guard let column = columns[key], let index = table.selectIndex(of: column),
                    let destination = model.entity(named: relationship.destinationEntityName)
                else {
                    slots.append(.none)
                    continue
                }
                let entityColumn = entityColumns[key]
                slots.append(
                    .toOne(
                        column: column, index: index, entityColumn: entityColumn,
                        entityIndex: entityColumn.flatMap { table.selectIndex(of: $0) },
                        destination: destination.entityNumber))
            case .relationship(let relationship):
                if let (column, root) = inverseForeignKey(of: relationship), let destinationTable = tables[root],
                    let destination = model.entity(named: relationship.destinationEntityName)
                {
                    slots.append(
                        .toManyForeignKey(
                            ForeignKeyToMany(
                                table: destinationTable.name, column: column,
                                destinationNumbers: destination.hierarchyNumbers.sorted(),
                                orderColumn: relationship.isOrdered
                                    ? StoreLayout.identifier("Z_FOK_" + column.dropFirst()) : nil)))
                } else if let join = joins[key] {
                    slots.append(.toManyJoin(join))
                } else {
                    slots.append(.none)
                }
            }
        }
        return EntityLayout(entity: entity, table: table.name, slots: slots)
    }
}
