import Foundation
import Strata

/// Computes a ``StoreLayout``: table and column names the way Core Data names them, matched
/// against an existing store's tables and columns when there is one (docs/formats/sqlite.md,
/// "Names").
///
/// Names are drawn in Core Data's order from one ``NameGenerator`` per inheritance hierarchy:
/// hierarchies and their entities by `Z_ENT`; within an entity its attributes by name, then its
/// relationships by name (a to-one takes its key column, then its `Z<n>_` entity column); then
/// the order columns of ordered one-to-many relationships; then the join-table columns of
/// many-to-many pairs, in the order ``addJoinTables(_:)`` meets them. Stores written by Strata
/// before these rules keep theirs (``LayoutNaming/strataLegacy``).
struct LayoutBuilder {
    let model: ManagedObjectModel
    /// Model entity number → store `Z_ENT`.
    let storeNumbers: [Int32: Int32]
    /// Existing tables' columns (every column), by table name; `nil` for a new store.
    let existingColumns: [String: [String]]?
    let existingTables: Set<String>?
    let naming: LayoutNaming

    var tables: [String: TableLayout] = [:]
    var entityLayouts: [Int32: EntityLayout] = [:]
    var joinTables: [String: JoinTable] = [:]
    /// "Entity.property" (declaring entity) → column name.
    var columns: [String: String] = [:]
    var entityColumns: [String: String] = [:]
    /// "Entity.property" (declaring entity of a to-one) → its `Z_FOK_` order column.
    var orderColumns: [String: String] = [:]
    var joins: [String: JoinToMany] = [:]
    /// To-many relationships without an inverse stored as Core Data stores them: a foreign key in
    /// the destination's table (found in existing stores only).
    var ownedForeignKeys: [String: ForeignKeyToMany] = [:]
    /// Relationships whose storage an existing store lacks.
    var missingRelationships: Set<String> = []
    /// Column names per hierarchy, by root entity name.
    var generators: [String: NameGenerator] = [:]
    /// Table names of the store.
    var tableNames = NameGenerator(reserved: NameGenerator.systemTables)

    init(
        model: ManagedObjectModel, storeNumbers: [Int32: Int32], existingColumns: [String: [String]]?,
        existingTables: Set<String>?, naming: LayoutNaming
    ) {
        self.model = model
        self.storeNumbers = storeNumbers
        self.existingColumns = existingColumns
        self.existingTables = existingTables
        self.naming = naming
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

    func number(_ entity: EntityDescription) -> Int32 { storeNumbers[entity.entityNumber] ?? entity.entityNumber }

    /// The order names are drawn in: `Z_ENT` (model numbers for legacy stores).
    func drawsBefore(_ a: EntityDescription, _ b: EntityDescription) -> Bool {
        naming == .strataLegacy
            ? a.entityNumber < b.entityNumber : (number(a), a.entityNumber) < (number(b), b.entityNumber)
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
        let allRoots = model.entities.filter { $0.superentityName == nil }.sorted(by: drawsBefore)
        let roots = allRoots.filter { rootNames.contains($0.name) }
        // Every root of the model takes its table name, in the store or not, so the names do not
        // depend on the configuration (and match what inference from Z_PRIMARYKEY computes).
        for root in allRoots {
            let name = tableNames.unique("Z" + storedName(root).uppercased())
            if rootNames.contains(root.name) { buildTable(root, named: name) }
        }
        for root in roots { addOrderColumns(root) }
        if existingColumns == nil {
            // Core Data's creation order: INTEGER columns, then FLOAT/TIMESTAMP/DECIMAL, VARCHAR, BLOB.
            for (name, table) in tables {
                var ordered = table
                ordered.columns = table.columns.enumerated().sorted {
                    ($0.element.group, $0.offset) < ($1.element.group, $1.offset)
                }
                .map(\.element)
                tables[name] = ordered
            }
        }
        addJoinTables(roots)
        for root in roots {
            for entity in hierarchy(of: root) { entityLayouts[entity.entityNumber] = layout(of: entity) }
        }
    }

    func hierarchy(of root: EntityDescription) -> [EntityDescription] {
        model.entities.filter { $0.rootEntityName == root.name }.sorted(by: drawsBefore)
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

    /// The stored properties an entity declares, in the order their columns are named.
    private func namingOrder(_ entity: EntityDescription) -> [PropertyDescription] {
        let stored = entity.ownProperties.filter { !$0.isTransient }
        guard naming == .coreData else { return stored }
        return stored.filter { $0.attribute != nil }.sorted { $0.name < $1.name }
            + stored.filter { $0.relationship != nil }.sorted { $0.name < $1.name }
    }

    private mutating func buildTable(_ root: EntityDescription, named name: String) {
        var table = TableLayout(name: name, root: root.name, columns: [])
        var generator = NameGenerator(reserved: NameGenerator.bookkeepingColumns)
        let existing = existingColumns?[name]
        /// The column of a property, and the name its column was made from.
        func allocate(_ property: String, renamed: String?) -> (column: String, stem: String) {
            let candidate = generator.next(naming.columnBase(property))
            if let existing, !existing.contains(candidate), let renamed {
                let old = naming.columnBase(renamed)
                if existing.contains(old), generator.take(old) { return (old, renamed) }
            }
            generator.take(candidate)
            return (candidate, property)
        }
        for entity in hierarchy(of: root) {
            for property in namingOrder(entity) {
                let key = "\(entity.name).\(property.name)"
                switch property {
                case .attribute(let attribute) where attribute.isComposite:
                    // Core Data's layout (INFERRED, docs/formats/sqlite.md): one column per leaf
                    // element, named from the element's own name like any attribute.
                    for (path, element) in attribute.leafElements {
                        let column = allocate(element.name, renamed: element.renamingIdentifier).column
                        let (type, group) = Self.columnType(element.type)
                        table.columns.append(.init(name: column, type: type, group: group))
                        columns["\(key).\(path)"] = column
                    }
                case .attribute(let attribute):
                    let column = allocate(attribute.name, renamed: attribute.renamingIdentifier).column
                    let (type, group) = Self.columnType(attribute.type)
                    table.columns.append(.init(name: column, type: type, group: group))
                    columns[key] = column
                case .relationship(let relationship) where !relationship.isToMany:
                    let (column, stem) = allocate(relationship.name, renamed: relationship.renamingIdentifier)
                    table.columns.append(.init(name: column, type: "INTEGER", group: 0))
                    columns[key] = column
                    if let destination = model.entity(named: relationship.destinationEntityName),
                        !destination.subentityNames.isEmpty
                    {
                        let entityColumn: String
                        switch naming {
                        case .strataLegacy:
                            entityColumn = "Z\(number(destination))_" + column.dropFirst()
                            generator.take(entityColumn)
                        case .coreData:
                            entityColumn = generator.unique(
                                "Z\(number(destination))_" + naming.columnBase(stem).dropFirst())
                        }
                        table.columns.append(.init(name: entityColumn, type: "INTEGER", group: 0))
                        entityColumns[key] = entityColumn
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
        generators[root.name] = generator
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
                else {
                    slots.append(.missing)
                    continue
                }
                slots.append(.attribute(column: column, index: index, type: attribute.type))
            case .relationship(let relationship) where !relationship.isToMany:
                guard let column = columns[key], !table.missing.contains(column),
                    let index = table.selectIndex(of: column),
                    let destination = model.entity(named: relationship.destinationEntityName)
                else {
                    slots.append(.missing)
                    continue
                }
                let entityColumn = entityColumns[key].flatMap { table.missing.contains($0) ? nil : $0 }
                slots.append(
                    .toOne(
                        column: column, index: index, entityColumn: entityColumn,
                        entityIndex: entityColumn.flatMap { table.selectIndex(of: $0) },
                        destination: destination.entityNumber))
            case .relationship(let relationship):
                slots.append(toManySlot(relationship, key: key))
            }
        }
        return EntityLayout(entity: entity, storeNumber: number(entity), table: table.name, slots: slots)
    }

    private func toManySlot(_ relationship: RelationshipDescription, key: String) -> SlotLayout {
        if missingRelationships.contains(key) { return .missing }
        if let (column, inverseKey, root) = inverseForeignKey(of: relationship), let destinationTable = tables[root],
            let destination = model.entity(named: relationship.destinationEntityName)
        {
            guard !destinationTable.missing.contains(column) else { return .missing }
            let order = relationship.isOrdered ? orderColumns[inverseKey] : nil
            return .toManyForeignKey(
                ForeignKeyToMany(
                    table: destinationTable.name, column: column,
                    destinationNumbers: destination.hierarchyNumbers.map(number(_:)).sorted(),
                    orderColumn: order.flatMap { destinationTable.missing.contains($0) ? nil : $0 }))
        }
        if let owned = ownedForeignKeys[key] { return .toManyForeignKey(owned) }
        if let join = joins[key] {
            if let existingTables, !existingTables.contains(join.table) { return .missing }
            return .toManyJoin(join)
        }
        return .missing
    }

    func number(_ entityNumber: Int32) -> Int32 { storeNumbers[entityNumber] ?? entityNumber }
}
