import Foundation
import Strata

extension LayoutBuilder {
    /// Adds `Z_FOK_<REL>` columns for ordered one-to-many relationships declared in `root`'s hierarchy.
    mutating func addOrderColumns(_ root: EntityDescription) {
        for entity in hierarchy(of: root) {
            for case .relationship(let relationship) in entity.ownProperties
            where relationship.isToMany && relationship.isOrdered && !relationship.isTransient {
                guard let (column, inverseKey, tableRoot) = inverseForeignKey(of: relationship),
                    orderColumns[inverseKey] == nil,
                    var table = tables[tableRoot]
                else { continue }
                var order = "Z_FOK_" + column.dropFirst()
                if let existing = existingColumns?[table.name] {
                    if !existing.contains(order) { table.missing.insert(order) }
                } else {
                    if naming == .coreData { order = generators[tableRoot, default: NameGenerator()].unique(order) }
                    let position = (table.columns.firstIndex { $0.name == column } ?? table.columns.count - 1) + 1
                    table.columns.insert(.init(name: order, type: "INTEGER", group: 0), at: position)
                }
                orderColumns[inverseKey] = order
                tables[tableRoot] = table
            }
        }
    }

    /// The inverse to-one's foreign-key column of a to-many relationship, the inverse's key
    /// ("Entity.property" of its declaring entity), and the root whose table holds it.
    func inverseForeignKey(of relationship: RelationshipDescription) -> (String, String, String)? {
        guard let inverseName = relationship.inverseName,
            let destination = model.entity(named: relationship.destinationEntityName),
            let inverse = destination.property(named: inverseName)?.relationship, !inverse.isToMany
        else { return nil }
        let key = "\(declaringEntity(of: inverseName, from: destination).name).\(inverseName)"
        guard let column = columns[key], tables[destination.rootEntityName] != nil else { return nil }
        return (column, key, destination.rootEntityName)
    }

    /// A to-many relationship of a pair or without inverse, with the entity declaring it.
    private struct Side {
        var entity: EntityDescription
        var relationship: RelationshipDescription
        var key: String { "\(entity.name).\(relationship.name)" }
        /// `relationship.name` upper-cased, as join tables and columns spell it.
        var upper: String { relationship.name.uppercased() }
    }

    /// Names the join tables (and, in existing stores, finds them and their columns) of every
    /// to-many relationship stored neither as a foreign key nor, in an existing store, as Core
    /// Data's foreign key of a to-many without inverse.
    ///
    /// Core Data (decompiled `-[NSSQLManyToMany _setInverseManyToMany:]`, INFERRED) makes the first
    /// relationship of a pair it meets the *master*: the table is `Z_<e><MASTER>` (`e` the
    /// number of the entity declaring it); each side owns the column holding its own entity's
    /// keys, named after the other side (`Z_<e><INVERSE>`), drawn from its hierarchy's generator,
    /// the inverse's first; a side whose inverse is ordered also owns `Z_FOK_<e><INVERSE>`. A
    /// relationship that is its own inverse pairs `Z_<e><NAME>` with the literal `REFLEXIVE` (and
    /// `FOK_REFLEXIVE` when ordered). Core Data meets entities in name order (AddressBook's
    /// `Z_22PARENTGROUPS`) and an entity's relationships in hash order; Strata takes them by name.
    mutating func addJoinTables(_ roots: [EntityDescription]) {
        let rootNames = Set(roots.map(\.name))
        var seen: Set<String> = []
        var pairs: [(master: Side, inverse: Side)] = []
        var unpaired: [Side] = []
        let visited = model.entities.filter { rootNames.contains($0.rootEntityName) }.sorted { $0.name < $1.name }
        for entity in visited {
            let relationships = entity.relationships.filter { $0.isToMany && !$0.isTransient }.sorted {
                $0.name < $1.name
            }
            for relationship in relationships {
                let side = Side(
                    entity: declaringEntity(of: relationship.name, from: entity), relationship: relationship)
                guard !seen.contains(side.key), inverseForeignKey(of: relationship) == nil,
                    let destination = model.entity(named: relationship.destinationEntityName),
                    rootNames.contains(destination.rootEntityName)
                else { continue }
                seen.insert(side.key)
                guard let inverseName = relationship.inverseName else {
                    unpaired.append(side)
                    continue
                }
                guard let inverse = destination.property(named: inverseName)?.relationship, inverse.isToMany else {
                    continue
                }
                let other = Side(entity: declaringEntity(of: inverseName, from: destination), relationship: inverse)
                seen.insert(other.key)
                pairs.append((side, other))
            }
        }
        for (master, inverse) in pairs { addPair(master: master, inverse: inverse) }
        for side in unpaired { addUnpaired(side) }
    }

    private mutating func addPair(master r: Side, inverse s: Side) {
        let reflexive = r.key == s.key
        let e = number(r.entity)
        let f = number(s.entity)
        // Core Data draws the inverse's names first.
        var sColumn = "REFLEXIVE"
        var sOrder: String? = r.relationship.isOrdered ? "FOK_REFLEXIVE" : nil
        if !reflexive {
            sColumn = generators[s.entity.rootEntityName, default: NameGenerator()].unique("Z_\(f)" + r.upper)
            if r.relationship.isOrdered {
                sOrder = generators[s.entity.rootEntityName, default: NameGenerator()].unique("Z_FOK_\(f)" + r.upper)
            }
        }
        var rColumn = generators[r.entity.rootEntityName, default: NameGenerator()].unique("Z_\(e)" + s.upper)
        var rOrder =
            s.relationship.isOrdered
            ? generators[r.entity.rootEntityName, default: NameGenerator()].unique("Z_FOK_\(e)" + s.upper) : nil
        let base = "Z_\(e)" + r.upper
        var table = tableNames.next(base)
        if let existingTables {
            // Core Data may have named the table after either side.
            let alternative = "Z_\(f)" + s.upper
            guard
                let found = [table, base, alternative].first(where: {
                    existingTables.contains($0) && !tableNames.contains($0)
                })
            else {
                missingRelationships.formUnion([r.key, s.key])
                return
            }
            table = found
            let present = existingColumns?[found] ?? []
            guard
                let matched = Self.matchColumns(
                    present, preferred: (rColumn, sColumn), reflexive: reflexive,
                    r: (numbers: [e, number(of: s.relationship.destinationEntityName)], name: s.upper),
                    s: (numbers: [f, number(of: r.relationship.destinationEntityName)], name: r.upper))
            else {
                missingRelationships.formUnion([r.key, s.key])
                return
            }
            (rColumn, sColumn) = matched
            rOrder = s.relationship.isOrdered ? Self.orderColumn(of: rColumn, preferred: rOrder, in: present) : nil
            sOrder = r.relationship.isOrdered ? Self.orderColumn(of: sColumn, preferred: sOrder, in: present) : nil
            // A self-inverse relationship's Z_FOK_ column only mirrors FOK_REFLEXIVE; a store may lack it.
            if (s.relationship.isOrdered && rOrder == nil && !reflexive) || (r.relationship.isOrdered && sOrder == nil)
            {
                missingRelationships.formUnion([r.key, s.key])
                return
            }
        }
        tableNames.take(table)
        let destinationOfR = tables[s.entity.rootEntityName]?.name ?? ""
        let destinationOfS = tables[r.entity.rootEntityName]?.name ?? ""
        joinTables[table] = JoinTable(
            name: table, firstColumn: rColumn, secondColumn: sColumn, secondOrderColumn: sOrder,
            firstOrderColumn: rOrder)
        joins[r.key] = JoinToMany(
            table: table, sourceColumn: rColumn, memberColumn: sColumn, orderColumn: sOrder,
            destinationTable: destinationOfR, mirrorOrderColumn: reflexive ? rOrder : nil)
        if !reflexive {
            joins[s.key] = JoinToMany(
                table: table, sourceColumn: sColumn, memberColumn: rColumn, orderColumn: rOrder,
                destinationTable: destinationOfS)
        }
    }

    /// A to-many without inverse: in stores Strata creates, a join table `Z_<e><REL>` with the
    /// owners in `Z_<e><REL>INVERSE` and the members in `Z_<d><REL>`; in an existing store
    /// without that table, Core Data's foreign key `Z<e><REL>` in the destination's table.
    private mutating func addUnpaired(_ r: Side) {
        guard let destination = model.entity(named: r.relationship.destinationEntityName),
            let destinationTable = tables[destination.rootEntityName]
        else { return }
        let e = number(r.entity)
        let base = "Z_\(e)" + r.upper
        let source = base + "INVERSE"
        let member = "Z_\(number(destination))" + r.upper
        let order = r.relationship.isOrdered ? "Z_FOK_" + member.dropFirst(2) : nil
        var table = tableNames.next(base)
        if let existingTables {
            if let found = [table, base].first(where: { existingTables.contains($0) && !tableNames.contains($0) }) {
                table = found
                let present = existingColumns?[found] ?? []
                guard present.contains(source), present.contains(member), order.map(present.contains) ?? true else {
                    missingRelationships.insert(r.key)
                    return
                }
            } else if let owned = ownedForeignKey(r, e: e, destination: destination, in: destinationTable) {
                ownedForeignKeys[r.key] = owned
                return
            } else {
                missingRelationships.insert(r.key)
                return
            }
        }
        tableNames.take(table)
        joinTables[table] = JoinTable(name: table, firstColumn: source, secondColumn: member, secondOrderColumn: order)
        joins[r.key] = JoinToMany(
            table: table, sourceColumn: source, memberColumn: member, orderColumn: order,
            destinationTable: destinationTable.name)
    }

    /// Core Data's storage of a to-many without inverse (decompiled `-[NSSQLEntity
    /// _addVirtualToOneForToMany:]`, INFERRED): a hidden to-one `<e><REL>` of the destination, so
    /// a foreign key `Z<e><REL>` in its table, with `Z_FOK_<e><REL>` when ordered (by analogy with
    /// ordered one-to-many order keys; not seen in any store).
    private func ownedForeignKey(
        _ r: Side, e: Int32, destination: EntityDescription, in table: TableLayout
    ) -> ForeignKeyToMany? {
        guard let present = existingColumns?[table.name] else { return nil }
        let candidates = ["Z\(e)" + LayoutNaming.asciiUppercased(r.relationship.name), "Z\(e)" + r.upper]
        guard let column = candidates.first(where: present.contains) else { return nil }
        var order: String?
        if r.relationship.isOrdered {
            order = "Z_FOK_" + column.dropFirst()
            guard let order, present.contains(order) else { return nil }
        }
        return ForeignKeyToMany(
            table: table.name, column: column,
            destinationNumbers: destination.hierarchyNumbers.map(number(_:)).sorted(),
            orderColumn: order, ownsColumn: true)
    }

    private func number(of entityName: String) -> Int32 {
        model.entity(named: entityName).map(number(_:)) ?? -1
    }

    /// The two key columns of an existing join table: the names Strata would give when the table
    /// has both, else for each side the one column `Z_<n><NAME>` (with any numeric suffix) whose
    /// number is one the side's keys are named by and whose name is the other side's.
    static func matchColumns(
        _ present: [String], preferred: (String, String), reflexive: Bool,
        r: (numbers: [Int32], name: String), s: (numbers: [Int32], name: String)
    ) -> (String, String)? {
        if present.contains(preferred.0), present.contains(preferred.1) { return preferred }
        func candidates(_ side: (numbers: [Int32], name: String)) -> [String] {
            present.filter { column in
                side.numbers.contains { number in
                    let base = "Z_\(number)" + side.name
                    guard column.hasPrefix(base) else { return false }
                    let rest = column.dropFirst(base.count)
                    return rest.allSatisfy { $0.isASCII && $0.isNumber }
                }
            }
        }
        let first = candidates(r)
        guard first.count == 1 else { return nil }
        if reflexive { return present.contains("REFLEXIVE") ? (first[0], "REFLEXIVE") : nil }
        let second = candidates(s).filter { $0 != first[0] }
        guard second.count == 1 else { return nil }
        return (first[0], second[0])
    }

    /// The order column of join column `column` in an existing table: `preferred` when present,
    /// else `Z_FOK_` and the column's name after `Z_`.
    static func orderColumn(of column: String, preferred: String?, in present: [String]) -> String? {
        if let preferred, present.contains(preferred) { return preferred }
        if column == "REFLEXIVE" { return present.contains("FOK_REFLEXIVE") ? "FOK_REFLEXIVE" : nil }
        let derived = "Z_FOK_" + column.dropFirst(2)
        return present.contains(derived) ? derived : nil
    }
}
