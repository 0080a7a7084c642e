import Foundation
import Strata

/// Reads a whole XML store into an ``AtomicStoreEngine/State``, checking it against the model.
///
/// Entity names (`type`) and property names are matched as written, then ignoring case
/// (``XMLNames``); object `zN` becomes the row
/// with primary key N, or the key its `pk` attribute gives (written when another hierarchy's row
/// uses N); every row starts at version 1 (the file keeps no versions). Relationships
/// are resolved after the last object, since `idrefs` may point forward.
///
/// Every problem is a ``StoreError/Code/corrupt`` naming file, line, column and what was expected:
/// an unknown entity or property, a property of the wrong kind, a value that does not parse as its
/// attribute's type, a duplicate id, a dangling idref, an idref to an object of the wrong entity,
/// several idrefs in a to-one relationship; and malformed or truncated XML (from libxml2).
///
/// Thread safety: none; one loader belongs to one open.
struct XMLStoreLoader {
    /// What a load gives back.
    struct Loaded {
        var state: AtomicStoreEngine.State
        /// The next free object number (`<nextObjectID>`, raised above every id in the file).
        var nextObjectID: Int64
        /// Each key chunk's number and the id of its first object, in file order; `nil` when the
        /// file does not allow copying chunks (ids not rising, a `pk`, `<databaseInfo>` after an
        /// object): XMLChunkLayout.swift.
        var chunkStarts: [(chunk: Int64, id: Int64)]? = nil
    }

    let model: ManagedObjectModel
    /// The entities the store may hold (its configuration).
    let entities: Set<Int32>
    let path: String
    let storeType: String
    /// How names in the file find entities and properties.
    let names: XMLNames

    private struct EntityPlan {
        var entity: EntityDescription
        var template: [StoreValue]
        var slots: [String: Int] = [:]
        /// What each slot holds, read once per entity instead of copying descriptions per value.
        var kinds: [SlotPlan]
        /// Property names in the order the first object of the entity listed them, with their
        /// slots: later objects (written the same way) match by position and a string compare.
        var sequence: [(name: String, slot: Int)] = []
    }

    private enum SlotPlan {
        case attribute(AttributeType, transient: Bool)
        case relationship(toMany: Bool, transient: Bool)
    }

    private struct PendingReference {
        var row: Int
        var slot: Int
        var targets: [Int64]
        var line: Int
    }

    /// Files at least this large are read on two cores (``XMLObjectPipeline``).
    static let pipelineBytes = 1 << 20

    /// Reads the file.
    func load() throws -> Loaded {
        let scanner = try XMLDocumentScanner(path: path)
        var rows: [RowSnapshot] = []
        // Object ids in file order. While they keep rising (files are written in id order) no id
        // can repeat and the index is not needed yet; it is built when an id falls back, or at the
        // end when references need resolving.
        var ids: [Int64] = []
        var rising = true
        var rowIndex: [Int64: Int] = [:]
        var lines: [Int] = []
        var pending: [PendingReference] = []
        var plans: [String: EntityPlan] = [:]
        var seen: [Bool] = []
        var last: (type: String, plan: EntityPlan)?
        var chunkStarts: [(chunk: Int64, id: Int64)]? = []
        // Large files are read on two cores: libxml2 on one, rows built on this one.
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let twoCores = size >= Self.pipelineBytes && ProcessInfo.processInfo.activeProcessorCount > 1
        func consume(_ raw: XMLRawObject) throws {
            if chunkStarts != nil {
                let chunk = XMLChunkLayout.chunk(of: raw.id)
                if raw.primaryKey != nil || raw.id <= ids.last ?? .min {
                    chunkStarts = nil
                } else if chunk != chunkStarts?.last?.chunk {
                    chunkStarts?.append((chunk, raw.id))
                }
            }
            var plan: EntityPlan
            var planChanged = false
            if let last, last.type == raw.type {
                plan = last.plan
            } else if let cached = plans[raw.type] {
                plan = cached
            } else {
                plan = try makePlan(raw)
                planChanged = true
            }
            if rising, let previous = ids.last, raw.id <= previous {
                rising = false
                rowIndex.reserveCapacity(ids.count * 2)
                for (index, id) in ids.enumerated() { rowIndex[id] = index }
            }
            if !rising, let earlier = rowIndex[raw.id] {
                throw corrupt(
                    "expected a unique object id, but z\(raw.id) was already used on line \(lines[earlier])",
                    line: raw.line, element: "object")
            }
            let entity = plan.entity
            var values = plan.template
            seen.removeAll(keepingCapacity: true)
            seen.append(contentsOf: repeatElement(false, count: values.count))
            for (position, property) in raw.properties.enumerated() {
                let slot: Int
                if position < plan.sequence.count, plan.sequence[position].name == property.name {
                    slot = plan.sequence[position].slot
                } else if let known = plan.slots[property.name] {
                    slot = known
                    if position == plan.sequence.count {
                        plan.sequence.append((property.name, known))
                        planChanged = true
                    }
                } else if case .found(let found) = names.slot(forProperty: property.name, in: entity) {
                    slot = found
                    plan.slots[property.name] = found
                    if position == plan.sequence.count { plan.sequence.append((property.name, found)) }
                    planChanged = true
                } else if case .ambiguous(let candidates) = names.slot(forProperty: property.name, in: entity) {
                    throw corrupt(
                        "expected a property of entity '\(entity.name)', found '\(property.name)', which matches several only ignoring case (\(candidates.joined(separator: ", "))); open the store with the model that wrote it",
                        line: property.line, element: property.isRelationship ? "relationship" : "attribute")
                } else {
                    throw corrupt(
                        "expected a property of entity '\(entity.name)', found '\(property.name)', which the model does not have",
                        line: property.line, element: property.isRelationship ? "relationship" : "attribute")
                }
                guard !seen[slot] else {
                    throw corrupt(
                        "expected '\(property.name)' once in object z\(raw.id), found it twice", line: property.line,
                        element: property.isRelationship ? "relationship" : "attribute")
                }
                seen[slot] = true
                switch plan.kinds[slot] {
                case .attribute(let type, let transient):
                    guard !property.isRelationship else {
                        throw corrupt(
                            "expected <attribute> for '\(entity.properties[slot].name)' of entity '\(entity.name)', found <relationship>",
                            line: property.line, element: "relationship")
                    }
                    if transient { continue }
                    guard
                        let value = XMLValueCoding.parse(
                            property.text, as: type, base64Encoded: property.isBase64Encoded)
                    else {
                        throw corrupt(
                            "expected \(type.xcodeName) text for attribute '\(entity.properties[slot].name)' of entity '\(entity.name)', found '\(property.text.prefix(60))'",
                            line: property.line, element: "attribute")
                    }
                    values[slot] = value
                case .relationship(let toMany, let transient):
                    guard property.isRelationship else {
                        throw corrupt(
                            "expected <relationship> for '\(entity.properties[slot].name)' of entity '\(entity.name)', found <attribute>",
                            line: property.line, element: "attribute")
                    }
                    if transient { continue }
                    if !toMany, property.idrefs.count > 1 {
                        throw corrupt(
                            "expected at most one id in to-one relationship '\(entity.properties[slot].name)', found \(property.idrefs.count)",
                            line: property.line, element: "relationship")
                    }
                    if !property.idrefs.isEmpty {
                        pending.append(
                            PendingReference(row: rows.count, slot: slot, targets: property.idrefs, line: property.line)
                        )
                    }
                }
            }
            if planChanged { plans[raw.type] = plan }
            if planChanged || last?.type != raw.type { last = (raw.type, plan) }
            if !rising { rowIndex[raw.id] = rows.count }
            ids.append(raw.id)
            lines.append(raw.line)
            let key = raw.primaryKey ?? raw.id
            rows.append(
                RowSnapshot(id: RowID(entity: entity.entityNumber, primaryKey: key), version: 1, values: values))
        }
        let info = try twoCores ? XMLObjectPipeline.scan(scanner, object: consume) : scanner.scan(object: consume)
        if rising, !pending.isEmpty {
            rowIndex.reserveCapacity(ids.count)
            for (index, id) in ids.enumerated() { rowIndex[id] = index }
        }
        for reference in pending {
            let source = rows[reference.row]
            let entity = model.entity(number: source.id.entity)!  // rows were made from model entities
            let relationship = entity.properties[reference.slot].relationship!  // pending only for relationships
            let destination = model.entity(named: relationship.destinationEntityName)
            var targets: [RowID] = []
            targets.reserveCapacity(reference.targets.count)
            for number in reference.targets {
                guard let index = rowIndex[number] else {
                    throw corrupt(
                        "expected idrefs of '\(relationship.name)' in object z\(source.id.primaryKey) to name objects of the file, found z\(number), which no <object> has",
                        line: reference.line, element: "relationship")
                }
                let target = rows[index].id
                if let destination, !destination.hierarchyNumbers.contains(target.entity) {
                    let found = model.entity(number: target.entity)?.name ?? "?"
                    throw corrupt(
                        "expected '\(relationship.name)' of object z\(source.id.primaryKey) to name \(destination.name) objects, found z\(number), a \(found)",
                        line: reference.line, element: "relationship")
                }
                targets.append(target)
            }
            rows[reference.row].values[reference.slot] =
                relationship.isToMany ? .references(targets) : .reference(targets[0])
        }
        var state = AtomicStoreEngine.State(metadata: XMLMetadataCoding.metadata(from: info, storeType: storeType))
        var largest: Int64 = ids.max() ?? 0
        // Rows come in runs of one entity: each run goes into its table in one go, tables sized
        // first. A key used twice in one entity shows when it is stored; across a hierarchy of
        // several entities, a set of the hierarchy's keys finds it.
        var counts: [Int32: Int] = [:]
        var start = 0
        while start < rows.count {
            let entity = rows[start].id.entity
            var end = start
            while end < rows.count, rows[end].id.entity == entity { end += 1 }
            counts[entity, default: 0] += end - start
            start = end
        }
        for (entity, count) in counts { state.rows[entity] = Dictionary(minimumCapacity: count) }
        var hierarchyKeys: [Int32: Set<Int64>] = [:]
        start = 0
        while start < rows.count {
            let entity = rows[start].id.entity
            // Rows were made from model entities.
            let description = model.entity(number: entity)!
            let root = model.entity(number: description.rootEntityNumber)!
            let shared = root.hierarchyNumbers.count > 1
            var table = state.rows.removeValue(forKey: entity) ?? [:]
            var end = start
            while end < rows.count, rows[end].id.entity == entity {
                let row = rows[end]
                let repeated = table.updateValue(row, forKey: row.id.primaryKey) != nil
                if repeated
                    || (shared && !hierarchyKeys[root.entityNumber, default: []].insert(row.id.primaryKey).inserted)
                {
                    throw corrupt(
                        "expected unique primary keys in each entity hierarchy, but \(root.name) key \(row.id.primaryKey) is used twice",
                        line: lines[end], element: "object")
                }
                largest = max(largest, row.id.primaryKey)
                end += 1
            }
            state.rows[entity] = table
            start = end
        }
        for entity in model.entities where entity.superentityName == nil {
            state.maxKeys[entity.entityNumber] = largest
        }
        // Saturating: a file whose ids reach Int64.max opens, and its counter is used up.
        let next = max(info.nextObjectID ?? 1, largest == .max ? .max : largest + 1)
        return Loaded(state: state, nextObjectID: next, chunkStarts: info.followsObject ? nil : chunkStarts)
    }

    private func makePlan(_ raw: XMLRawObject) throws -> EntityPlan {
        if case .ambiguous(let candidates) = names.entity(forType: raw.type) {
            throw corrupt(
                "expected an entity of the model as the type of object z\(raw.id), found '\(raw.type)', which matches several only ignoring case (\(candidates.joined(separator: ", "))); open the store with the model that wrote it",
                line: raw.line, element: "object")
        }
        guard case .found(let entity) = names.entity(forType: raw.type), entities.contains(entity.entityNumber) else {
            throw corrupt(
                "expected an entity of the model as the type of object z\(raw.id), found '\(raw.type)' (names are matched ignoring case)",
                line: raw.line, element: "object")
        }
        guard !entity.isAbstract else {
            throw corrupt(
                "expected a concrete entity as the type of object z\(raw.id), found abstract entity '\(entity.name)'",
                line: raw.line, element: "object")
        }
        let template = entity.properties.map { property -> StoreValue in
            if let relationship = property.relationship, relationship.isToMany, !relationship.isTransient {
                return .references([])
            }
            return .null
        }
        let kinds = entity.properties.map { property -> SlotPlan in
            switch property {
            case .attribute(let a): .attribute(a.type, transient: a.isTransient)
            case .relationship(let r): .relationship(toMany: r.isToMany, transient: r.isTransient)
            }
        }
        return EntityPlan(entity: entity, template: template, kinds: kinds)
    }

    private func corrupt(_ message: String, line: Int, element: String) -> StoreError {
        XMLStreamReader.corrupt(
            message, path: path, line: line, column: XMLStreamReader.column(of: element, onLine: line, in: path))
    }
}
