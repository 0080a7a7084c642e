import Foundation
import Strata

/// Writes a whole store (an ``AtomicStoreEngine/State``) in Core Data's XML store layout.
///
/// Objects are written in id order; entity names upper-cased and property names lower-cased, as
/// Core Data does; nil attributes left out; every relationship written on the side that holds it
/// (so both sides of an inverse pair), to-many members in their stored order. The markup of each
/// property (`<attribute name="…" type="…">`) is prepared once per entity.
///
/// Thread safety: immutable after init; `Sendable`.
struct XMLStoreEncoder: Sendable {
    /// The `<version>` Core Data writes in every known file.
    static let formatVersion: Int64 = 134_481_920

    private enum Slot: Sendable {
        case skip
        /// `<attribute name="…" type="…"` (open tag unfinished, so `encoding` can follow).
        case attribute(open: [UInt8])
        /// `<relationship name="…" type="min/max" destination="…"` (open tag unfinished).
        case relationship(open: [UInt8], toMany: Bool)
    }

    private struct Plan: Sendable {
        var open: [UInt8]  // `    <object type="ENTITY" id="z`
        var slots: [Slot]
    }

    private let plans: [Plan?]  // by entity number
    let model: ManagedObjectModel

    init(model: ManagedObjectModel) {
        self.model = model
        var plans = [Plan?](repeating: nil, count: (model.entities.map { Int($0.entityNumber) }.max() ?? 0) + 1)
        for entity in model.entities {
            var open = XMLByteWriter()
            open.raw("    <object type=\"")
            open.attribute(entity.name.uppercased())
            open.raw("\" id=\"z")
            let slots = entity.properties.map { property -> Slot in
                guard !property.isTransient else { return .skip }
                var tag = XMLByteWriter()
                switch property {
                case .attribute(let attribute):
                    tag.raw("        <attribute name=\"")
                    tag.attribute(attribute.name.lowercased())
                    tag.raw("\" type=\"")
                    tag.attribute(XMLValueCoding.typeName(attribute.type))
                    tag.raw("\"")
                    return .attribute(open: tag.buffer)
                case .relationship(let relationship):
                    tag.raw("        <relationship name=\"")
                    tag.attribute(relationship.name.lowercased())
                    tag.raw("\" type=\"")
                    tag.integer(Int64(relationship.minCount))
                    tag.raw("/")
                    tag.integer(Int64(relationship.maxCount))
                    tag.raw("\" destination=\"")
                    tag.attribute(relationship.destinationEntityName.uppercased())
                    tag.raw("\"")
                    return .relationship(open: tag.buffer, toMany: relationship.isToMany)
                }
            }
            plans[Int(entity.entityNumber)] = Plan(open: open.buffer, slots: slots)
        }
        self.plans = plans
    }

    /// Writes `state` with `nextObjectID` to `writer`.
    ///
    /// - Throws: ``StoreError/Code/constraint`` when two rows share a primary key (XML ids are one
    ///   number space for the whole file); ``StoreError/Code/invalidRequest`` for a row that does
    ///   not fit the model; I/O errors from the writer.
    func write(_ state: AtomicStoreEngine.State, nextObjectID: Int64, store: String, to writer: inout XMLByteWriter) throws {
        var unsorted: [RowSnapshot] = []
        unsorted.reserveCapacity(state.count)
        for table in state.rows.values { unsorted.append(contentsOf: table.values) }
        // Sort small (key, entity, position) triples rather than moving whole snapshots.
        var order: [(key: Int64, entity: Int32, index: Int)] = []
        order.reserveCapacity(unsorted.count)
        for (index, row) in unsorted.enumerated() { order.append((row.id.primaryKey, row.id.entity, index)) }
        order.sort { a, b in a.key != b.key ? a.key < b.key : a.entity < b.entity }
        let rows: [RowSnapshot] = order.map { unsorted[$0.index] }
        // Object ids are one number space; keys are per hierarchy. The first row with key N is zN;
        // another hierarchy's row with key N gets a fresh number past every key and keeps N in `pk`.
        var remapped: [RowID: Int64] = [:]
        var nextFree = max(nextObjectID, (rows.last?.id.primaryKey ?? 0) + 1)
        var previous: RowID?
        for row in rows {
            if let previous, previous.primaryKey == row.id.primaryKey {
                remapped[row.id] = nextFree
                nextFree += 1
            }
            previous = row.id
        }
        let ids = ObjectIDs(remapped: remapped)
        writer.raw("<?xml version=\"1.0\" standalone=\"yes\"?>\n")
        writer.raw("<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\">\n\n")
        writer.raw("<database>\n    <databaseInfo>\n        <version>")
        writer.integer(Self.formatVersion)
        writer.raw("</version>\n        <UUID>")
        writer.text(state.metadata.uuid)
        writer.raw("</UUID>\n        <nextObjectID>")
        writer.integer(nextFree)
        writer.raw("</nextObjectID>\n        <metadata>")
        let metadata = XMLMetadataCoding.dictionary(for: state.metadata)
        if !metadata.isEmpty {
            writer.raw("\n")
            XMLPropertyList.write(.dictionary(metadata), indent: 12, to: &writer)
            writer.raw("        ")
        }
        writer.raw("</metadata>\n    </databaseInfo>\n")
        for row in rows {
            try write(row, ids: ids, store: store, to: &writer)
            try writer.flushIfFull()
        }
        writer.raw("</database>\n")
    }

    private func write(_ row: RowSnapshot, ids: ObjectIDs, store: String, to writer: inout XMLByteWriter) throws {
        guard plans.indices.contains(Int(row.id.entity)), let plan = plans[Int(row.id.entity)], row.values.count == plan.slots.count
        else {
            throw StoreError(.invalidRequest, "row \(row.id) does not fit the model", store: store)
        }
        writer.raw(plan.open)
        writer.integer(ids.number(of: row.id))
        if ids.remapped[row.id] != nil {
            writer.raw("\" pk=\"")
            writer.integer(row.id.primaryKey)
        }
        writer.raw("\">\n")
        for (slot, value) in zip(plan.slots, row.values) {
            switch slot {
            case .skip: continue
            case .attribute(let open):
                if value.isNull { continue }
                writer.raw(open)
                if case .string(let text) = value {
                    // Strings are checked once: written escaped, or base64 when XML cannot carry them.
                    if XMLByteWriter.isRepresentable(text) {
                        writer.raw(">")
                        writer.text(text)
                    } else {
                        writer.raw(" encoding=\"base64\">")
                        writer.base64(Data(text.utf8))
                    }
                    writer.raw("</attribute>\n")
                    continue
                }
                writer.raw(">")
                guard XMLValueCoding.write(value, to: &writer) else {
                    throw StoreError(.invalidRequest, "row \(row.id) holds a \(value.kindName) in an attribute", store: store)
                }
                writer.raw("</attribute>\n")
            case .relationship(let open, _):
                writer.raw(open)
                switch value {
                case .null, .references([]): break
                case .reference(let target):
                    writer.raw(" idrefs=\"z")
                    writer.integer(ids.number(of: target))
                    writer.raw("\"")
                case .references(let targets):
                    writer.raw(" idrefs=\"")
                    for (index, target) in targets.enumerated() {
                        writer.raw(index == 0 ? "z" : " z")
                        writer.integer(ids.number(of: target))
                    }
                    writer.raw("\"")
                default:
                    throw StoreError(
                        .invalidRequest, "row \(row.id) holds a \(value.kindName) in a relationship; the whole graph must be loaded to write it",
                        store: store)
                }
                writer.raw("></relationship>\n")
            }
        }
        writer.raw("    </object>\n")
    }
}

/// The object number (`zN`) of each row: its primary key, unless another hierarchy's row took it.
struct ObjectIDs {
    let remapped: [RowID: Int64]

    func number(of row: RowID) -> Int64 { remapped[row] ?? row.primaryKey }
}
