import Foundation
import Strata

/// Writes a checked interchange document into a store as one all-or-nothing change, reading the
/// file again instead of holding its values (``StoreDriver/apply(inParts:)``).
///
/// The document holds each object's id, entity and relationship targets (by position), not its
/// attribute values. Every object gets its primary key up front (one reservation per entity), so
/// a row can name objects later in the file. The change is handed to the driver in change sets
/// of ``partSize`` rows: the file's objects as inserts, in file order, with the model's defaults
/// for attributes not given and both sides of every relationship; then, when the model has
/// ordered to-many relationships whose order a store may keep in the members' rows (SQLite's
/// `Z_FOK_` column), the owners again as updates restating those relationships, now that every
/// member exists. A driver that starts its transaction over reads the file again from the start.
struct InterchangeWriter {
    /// Rows per change set.
    static let partSize = 1_000

    private let model: ManagedObjectModel
    /// The primary key of each object, by position in the document.
    private var keys: [Int64] = []
    /// Slots to restate after every row is written, by entity name (``MemberOrders``).
    private var restated: [String: [Int]] = [:]

    init(model: ManagedObjectModel) {
        self.model = model
        for entity in model.entities {
            let slots = MemberOrders.restatedSlots(of: entity, model: model)
            if !slots.isEmpty { restated[entity.name] = slots }
        }
    }

    /// The file's objects that share a uniqueness constraint's values with a row already stored,
    /// found by reading the stored rows of each constrained hierarchy once.
    static func storedConflicts(_ document: InterchangeDocument, _ driver: any StoreDriver) throws
        -> [InterchangeProblem]
    {
        var problems: [InterchangeProblem] = []
        for (key, positions) in document.uniqueValues.sorted(by: { $0.key.root < $1.key.root }) {
            guard let root = document.model.entity(named: key.root) else { continue }
            for entity in document.model.entities where entity.isKind(of: root) {
                let slots = key.constraint.compactMap { entity.index(ofProperty: $0) }
                guard slots.count == key.constraint.count else { continue }
                try driver.scanRows(RowScan(entity: entity)) { rows in
                    for row in rows {
                        let values = slots.map { row.values[$0] }
                        guard let position = positions[values] else { continue }
                        problems.append(
                            InterchangeProblem(
                                document.objects[position].path,
                                "unique constraint (\(key.constraint.joined(separator: ", "))) violated: \(values.map(\.displayText).joined(separator: ", ")) is also used by the stored \(entity.name) with primary key \(row.id.primaryKey)"
                            ))
                    }
                }
            }
        }
        return problems
    }

    /// Reserves every object's key, then writes every object through `driver` in parts, reading
    /// the file again with a reader from `makeReader` for each pass.
    ///
    /// - Throws: ``ToolError`` when the file changed since it was checked; the driver's error
    ///   when the change fails. Either way the store is as it was (keys reserved stay used).
    mutating func write(
        _ document: inout InterchangeDocument, into driver: any StoreDriver,
        reading makeReader: () throws -> InterchangeStreamReader
    ) throws {
        try reserveKeys(document, driver)
        var reader: InterchangeStreamReader?
        var restating = false
        var finished = false
        var read = 0
        _ = try driver.apply(inParts: { first in
            if first {
                reader = try makeReader()
                restating = false
                finished = false
                read = 0
            }
            while !finished {
                var part = ChangeBatch()
                while part.inserts.count + part.updates.count < Self.partSize,
                    let (index, item) = try reader?.nextObject()
                {
                    guard index < document.objects.count else { throw Self.changed() }
                    if !restating { read += 1 }
                    let entity = document.objects[index].entity
                    let slots = restated[entity.name]
                    if restating && slots == nil { continue }
                    let values = row(index, try document.values(of: item, at: index), document)
                    let id = RowID(entity: entity.entityNumber, primaryKey: keys[index])
                    if let slots, restating {
                        part.updates.append(RowUpdate(id: id, expectedVersion: 1, values: values, changedSlots: slots))
                    } else {
                        part.inserts.append(RowSnapshot(id: id, version: 1, values: values))
                    }
                }
                if !part.isEmpty { return part }
                if !restating && read != document.objects.count { throw Self.changed() }
                if restating || restated.isEmpty {
                    finished = true
                } else {
                    restating = true
                    reader = try makeReader()
                }
            }
            return nil
        })
    }

    /// One key per object, reserved per entity in model order and handed out in file order.
    private mutating func reserveKeys(_ document: InterchangeDocument, _ driver: any StoreDriver) throws {
        var counts: [String: Int] = [:]
        for object in document.objects { counts[object.entity.name, default: 0] += 1 }
        var next: [String: Int64] = [:]
        for entity in model.entities {
            guard let count = counts[entity.name] else { continue }
            let range = try driver.allocatePrimaryKeys(forEntity: entity.entityNumber, count: count)
            let length = range.upperBound.subtractingReportingOverflow(range.lowerBound)
            guard range.lowerBound > 0, !length.overflow, length.partialValue == Int64(count) - 1 else {
                throw StoreError(
                    .corrupt,
                    "the store's key counter is damaged: asked for \(count) keys of \(entity.name), it handed out \(range.lowerBound)...\(range.upperBound); restore the store from a backup"
                )
            }
            next[entity.name] = range.lowerBound
        }
        keys = document.objects.map { object in
            // Every entity with objects got a range above.
            let key = next[object.entity.name]!
            next[object.entity.name] = key + 1
            return key
        }
    }

    /// The row of the object at `position`: its attribute values (the model's default where not
    /// given, `.null` for transient slots) and its relationships as row IDs.
    private func row(_ position: Int, _ attributes: [Int: StoreValue], _ document: InterchangeDocument)
        -> [StoreValue]
    {
        let object = document.objects[position]
        return object.entity.properties.enumerated().map { slot, property in
            switch property {
            case .attribute(let attribute):
                if attribute.isTransient { return .null }
                return attributes[slot] ?? attribute.defaultValue
            case .relationship(let relationship):
                if relationship.isTransient { return .null }
                let members = (object.relationships[slot] ?? []).map { member in
                    RowID(entity: document.objects[member].entity.entityNumber, primaryKey: keys[member])
                }
                if relationship.isToMany { return .references(members) }
                return members.first.map { .reference($0) } ?? .null
            }
        }
    }

    private static func changed() -> ToolError {
        ToolError.failure("the file changed while it was imported; nothing was imported")
    }
}
