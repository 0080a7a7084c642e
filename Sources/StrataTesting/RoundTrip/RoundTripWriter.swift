import Foundation
import Strata

/// Writes a ``RoundTripCase``'s graph through a coordinator, as an application would: inserts and
/// links every object in one context and saves; then, in a new context, applies the edits (values
/// and links first, deletions last) and saves again.
public enum RoundTripWriter {
    /// Writes the graph and returns the IDs of the objects that are still there, by object index.
    ///
    /// A deletion is skipped when it would be refused or leave a store that does not validate: a
    /// deny rule with destinations, a no-action rule whose destinations point back, a required
    /// to-one or a relationship without an inverse pointing at an object the deletion (with its
    /// cascades) removes. The decision reads only the graph, so it is the same on every driver.
    ///
    /// - Throws: The context's or store's error when a save fails.
    public static func write(_ testCase: RoundTripCase, to coordinator: PersistentStoreCoordinator) throws -> [Int:
        ManagedObjectID]
    {
        let context = ManagedObjectContext(coordinator: coordinator)
        var objects: [ManagedObject] = []
        for object in testCase.graph.objects {
            let inserted = try context.insertNewObject(forEntityName: object.entity)
            for (key, value) in object.values.sorted(by: { $0.key < $1.key }) { try set(value, key, on: inserted) }
            objects.append(inserted)
        }
        for (index, object) in testCase.graph.objects.enumerated() {
            for (key, targets) in object.links.sorted(by: { $0.key < $1.key }) {
                link(objects[index], key, to: targets.map { objects[$0] })
            }
        }
        try context.save()
        var ids: [Int: ManagedObjectID] = [:]
        for (index, object) in objects.enumerated() { ids[index] = object.objectID }
        guard !testCase.graph.edits.isEmpty else { return ids }

        let editing = ManagedObjectContext(coordinator: coordinator)
        let live = try ids.sorted(by: { $0.key < $1.key }).map { try editing.existingObject(with: $0.value) }
        for edit in testCase.graph.edits {
            switch edit {
            case .set(let object, let key, let value): try set(value, key, on: live[object])
            case .link(let object, let key, let targets): link(live[object], key, to: targets.map { live[$0] })
            case .delete: continue
            }
        }
        var deleting: Set<Int> = []
        for case .delete(let object) in testCase.graph.edits where !deleting.contains(object) {
            let removed = cascade(from: object, live, deleting)
            if deletable(removed, going: deleting.union(removed), live) {
                editing.delete(live[object])
                deleting.formUnion(removed)
            }
        }
        try editing.save()
        for index in deleting { ids[index] = nil }
        return ids
    }

    private static func set(_ value: RoundTripValue, _ key: String, on object: ManagedObject) throws {
        switch value {
        case .store(let stored): try object.setStoreValue(stored, forKey: key)
        case .strings(let strings): try object.setConvertedValue(strings, forKey: key)
        }
    }

    private static func link(_ object: ManagedObject, _ key: String, to targets: [ManagedObject]) {
        guard let relationship = object.entity.property(named: key)?.relationship else { return }
        if relationship.isToMany {
            for target in targets { object.addObject(target, toRelationship: key) }
        } else {
            object.setValue(targets.first, forKey: key)
        }
    }

    /// The members of `object`'s relationship `relationship`, as indexes into `live`.
    private static func members(
        _ object: ManagedObject, _ relationship: RelationshipDescription, _ live: [ManagedObject]
    ) -> [Int] {
        object.objectIDs(forRelationshipNamed: relationship.name).compactMap { id in
            live.firstIndex { $0.objectID == id }
        }
    }

    /// `start` and everything its cascade rules delete with it.
    private static func cascade(from start: Int, _ live: [ManagedObject], _ deleting: Set<Int>) -> Set<Int> {
        var removed: Set<Int> = [start]
        var queue = [start]
        while let next = queue.popLast() {
            for relationship in live[next].entity.relationships where relationship.deleteRule == .cascade {
                for member in members(live[next], relationship, live)
                where !removed.contains(member) && !deleting.contains(member) {
                    removed.insert(member)
                    queue.append(member)
                }
            }
        }
        return removed
    }

    /// Whether deleting `removed` (with `going`, everything deleted so far) is refused by nothing
    /// and leaves no reference to a deleted object behind.
    private static func deletable(_ removed: Set<Int>, going: Set<Int>, _ live: [ManagedObject]) -> Bool {
        for index in removed {
            for relationship in live[index].entity.relationships {
                let targets = members(live[index], relationship, live)
                if relationship.deleteRule == .deny && !targets.isEmpty { return false }
                if relationship.deleteRule == .noAction && relationship.inverseName != nil && !targets.isEmpty {
                    return false
                }
            }
        }
        for (index, object) in live.enumerated() where !going.contains(index) {
            for relationship in object.entity.relationships {
                let targets = members(object, relationship, live)
                guard targets.contains(where: removed.contains) else { continue }
                if relationship.inverseName == nil { return false }
                if !relationship.isToMany && !relationship.isOptional { return false }
                if relationship.isToMany && relationship.minCount > 0
                    && targets.filter({ !removed.contains($0) }).count < relationship.minCount
                {
                    return false
                }
            }
        }
        return true
    }
}
