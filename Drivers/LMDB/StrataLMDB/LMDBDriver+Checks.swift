import Foundation
import Strata

/// Which entities each relationship may name, so that row IDs read from the file are checked
/// before the core (which trusts its drivers' IDs to name model entities) sees them.
///
/// Thread safety: immutable; `Sendable`.
struct ReferenceTargets: Sendable {
    /// By entity number, then slot: a table by entity number of the entities the relationship
    /// may name (its destination's hierarchy); `nil` for slots that are not relationships.
    private let allowed: [[[Bool]?]]
    /// By entity number: the to-one slots, whose targets sit in row bodies.
    private let toOne: [[Int]]

    init(model: ManagedObjectModel) {
        let count = Int(model.entities.map(\.entityNumber).max() ?? -1) + 1
        var allowed = [[[Bool]?]](repeating: [], count: max(count, 0))
        var toOne = [[Int]](repeating: [], count: max(count, 0))
        for entity in model.entities where entity.entityNumber >= 0 {
            allowed[Int(entity.entityNumber)] = entity.properties.enumerated().map { slot, property -> [Bool]? in
                guard let relationship = property.relationship, !relationship.isTransient else { return nil }
                if !relationship.isToMany { toOne[Int(entity.entityNumber)].append(slot) }
                var table = [Bool](repeating: false, count: count)
                for number in model.entity(named: relationship.destinationEntityName)?.hierarchyNumbers ?? []
                where number >= 0 && Int(number) < count {
                    table[Int(number)] = true
                }
                return table
            }
        }
        self.allowed = allowed
        self.toOne = toOne
    }

    /// Whether slot `slot` of a row of `entity` may name `target`.
    @inline(__always)
    func allows(_ target: RowID, entity: Int32, slot: Int) -> Bool {
        guard target.primaryKey > 0, entity >= 0, Int(entity) < allowed.count, slot >= 0,
            slot < allowed[Int(entity)].count,
            let table = allowed[Int(entity)][slot], target.entity >= 0, Int(target.entity) < table.count
        else { return false }
        return table[Int(target.entity)]
    }

    /// The to-one slots of `entity`.
    @inline(__always)
    func toOneSlots(of entity: Int32) -> [Int] {
        entity >= 0 && Int(entity) < toOne.count ? toOne[Int(entity)] : []
    }
}

extension LMDBDriver {
    /// Checks the to-one references of a row decoded from the file.
    ///
    /// - Throws: ``StoreError/Code/corrupt`` naming the store, the row, the relationship and the
    ///   target when a reference names an entity outside the relationship's destination (or one
    ///   the model lacks), or a key that is not positive.
    @inline(__always)
    func checkReferences(_ row: RowSnapshot) throws {
        for slot in targets.toOneSlots(of: row.id.entity) {
            if case .reference(let target) = row.values[slot],
                !targets.allows(target, entity: row.id.entity, slot: slot)
            {
                throw badReference(target, from: row.id, slot: slot)
            }
        }
    }

    /// Checks the members of a to-many relationship read from the file (see ``checkReferences(_:)``).
    func checkMembers(_ members: [RowID], of source: RowID, slot: Int) throws {
        for member in members where !targets.allows(member, entity: source.entity, slot: slot) {
            throw badReference(member, from: source, slot: slot)
        }
    }

    private func badReference(_ target: RowID, from source: RowID, slot: Int) -> StoreError {
        let entity = model.entity(number: source.entity)
        let name = entity.flatMap { slot < $0.properties.count ? $0.properties[slot].name : nil } ?? "slot \(slot)"
        let problem: String
        if target.primaryKey <= 0 {
            problem = "key \(target.primaryKey), which is not positive"
        } else if let found = model.entity(number: target.entity) {
            problem = "\(target), a \(found.name), outside the relationship's destination"
        } else {
            problem = "\(target), of entity number \(target.entity), which the model does not have"
        }
        return StoreError(
            .corrupt,
            "row \(source) of \(entity?.name ?? "entity \(source.entity)"): relationship '\(name)' names \(problem); the store is damaged or was written with another model. Restore it from a backup",
            store: storeName)
    }

    /// Checks a row ID read from a key or value of the file: its key must be positive (keys at or
    /// below zero are the core's temporary IDs).
    @inline(__always)
    func checkKey(_ id: RowID) throws -> RowID {
        guard id.primaryKey > 0 else {
            let entity = model.entity(number: id.entity)?.name ?? "entity number \(id.entity)"
            throw StoreError(
                .corrupt,
                "a row of \(entity) has key \(id.primaryKey), which is not positive; the store is damaged. Restore it from a backup",
                store: storeName)
        }
        return id
    }

    /// The version after `version`, for an update.
    ///
    /// - Throws: ``StoreError/Code/corrupt`` when the stored version is already `Int64.max`.
    @inline(__always)
    func nextVersion(_ version: RowVersion, of id: RowID) throws -> RowVersion {
        guard version < .max else {
            let entity = model.entity(number: id.entity)?.name ?? "entity number \(id.entity)"
            throw StoreError(
                .corrupt,
                "row \(id) of \(entity) has version \(version), which cannot grow; the store is damaged. Restore it from a backup",
                store: storeName)
        }
        return version + 1
    }
}
