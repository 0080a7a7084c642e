import Foundation
import Strata

/// Writes a whole store (an ``AtomicStoreEngine/State``) in Core Data's XML store layout.
///
/// Objects are written in id order; entity names upper-cased and property names lower-cased, as
/// Core Data does, except names that would then collide (``XMLNames``); nil attributes left out; every relationship written on the side that holds it
/// (so both sides of an inverse pair), to-many members in their stored order. The markup of each
/// property (`<attribute name="…" type="…">`) is prepared once per entity.
///
/// Thread safety: immutable after init; `Sendable`.
struct XMLStoreEncoder: Sendable {
    /// The `<version>` Core Data writes in every known file.
    static let formatVersion: Int64 = 134_481_920

    private enum Kind: Sendable {
        case skip, attribute, relationship
    }

    /// One entity's markup, prepared once: the object's open tag and, per slot, what it is and
    /// its unfinished open tag (`<attribute name="…" type="…"`, `<relationship … destination="…"`),
    /// all tags in one byte array so writing one copies bytes without touching reference counts.
    private struct Plan: Sendable {
        var open: [UInt8]  // `    <object type="ENTITY" id="z`
        var kinds: [Kind]
        var tags: [UInt8]
        var ranges: [Range<Int>]
    }

    private let plans: [Plan?]  // by entity number
    let model: ManagedObjectModel

    init(model: ManagedObjectModel) {
        self.model = model
        var plans = [Plan?](repeating: nil, count: (model.entities.map { Int($0.entityNumber) }.max() ?? 0) + 1)
        let names = XMLNames(model: model)
        for entity in model.entities {
            var open = XMLByteWriter()
            open.raw("    <object type=\"")
            open.attribute(names.writtenName(of: entity))
            open.raw("\" id=\"z")
            var kinds: [Kind] = []
            var tags = XMLByteWriter()
            var ranges: [Range<Int>] = []
            for (slot, property) in entity.properties.enumerated() {
                let start = tags.count
                defer { ranges.append(start..<tags.count) }
                guard !property.isTransient else {
                    kinds.append(.skip)
                    continue
                }
                switch property {
                case .attribute(let attribute):
                    tags.raw("        <attribute name=\"")
                    tags.attribute(names.writtenName(ofSlot: slot, in: entity))
                    tags.raw("\" type=\"")
                    tags.attribute(XMLValueCoding.typeName(attribute.type))
                    tags.raw("\"")
                    kinds.append(.attribute)
                case .relationship(let relationship):
                    tags.raw("        <relationship name=\"")
                    tags.attribute(names.writtenName(ofSlot: slot, in: entity))
                    tags.raw("\" type=\"")
                    tags.integer(Int64(relationship.minCount))
                    tags.raw("/")
                    tags.integer(Int64(relationship.maxCount))
                    tags.raw("\" destination=\"")
                    tags.attribute(
                        model.entity(named: relationship.destinationEntityName).map(names.writtenName(of:))
                            ?? relationship.destinationEntityName.uppercased())
                    tags.raw("\"")
                    kinds.append(.relationship)
                }
            }
            plans[Int(entity.entityNumber)] = Plan(open: open.buffer, kinds: kinds, tags: tags.buffer, ranges: ranges)
        }
        self.plans = plans
    }

    /// Writes `state` with `nextObjectID` to `writer`.
    ///
    /// - Throws: ``StoreError/Code/constraint`` when two rows share a primary key (XML ids are one
    ///   number space for the whole file); ``StoreError/Code/invalidRequest`` for a row that does
    ///   not fit the model; I/O errors from the writer.
    /// - Parameters:
    ///   - reuse: The file being replaced, whose unchanged chunks are copied instead of encoded.
    ///   - cores: How many cores encode objects at once (default: every active core).
    /// - Returns: Where each key chunk's objects were written (offsets of `writer`; `nil` when some
    ///   object needed a remapped id, which rules out copying chunks later, R3) and how many
    ///   bytes were copied from `reuse`.
    @discardableResult
    func write(
        _ state: AtomicStoreEngine.State, nextObjectID: Int64, store: String, reuse: XMLReuseSource? = nil,
        to writer: inout XMLByteWriter, cores: Int? = nil
    ) throws -> (ranges: [Int64: Range<Int>]?, copied: Int) {
        // Rows are ordered by (key, entity): each table's keys read once in storage order, then a
        // sort of packed (key, position) numbers where they fit, of small tuples otherwise.
        let rows = ObjectRows(state)
        let keys = rows.keys
        var order = Self.directOrder(keys) ?? []  // positions in `rows`, in file order
        let positionBits = max(1, Int.bitWidth - (rows.count - 1).leadingZeroBitCount)
        if order.count == rows.count {
            // Placed by key already.
        } else if rows.count > 1, keys.allSatisfy({ $0 >= 0 && $0 < (1 << (63 - positionBits)) }) {
            // A larger key sorts later; equal keys keep table order (entity) through the position.
            var packed = keys.indices.map { UInt64(keys[$0]) << UInt64(positionBits) | UInt64($0) }
            packed.sort()
            let mask = UInt64(1) << UInt64(positionBits) - 1
            order = packed.map { Int($0 & mask) }
        } else {
            order = keys.indices.sorted { keys[$0] != keys[$1] ? keys[$0] < keys[$1] : $0 < $1 }
        }
        // Object ids are one number space; keys are per hierarchy. The first row with key N is zN;
        // another hierarchy's row with key N gets a fresh number past every key and keeps N in `pk`.
        var remapped: [RowID: Int64] = [:]
        // Saturating: a key of Int64.max leaves no id past it, which matters only for a remap.
        let largest = order.last.map { keys[$0] } ?? 0
        var nextFree = max(nextObjectID, largest == .max ? .max : largest + 1)
        var previous: Int64?
        for position in order {
            if let previous, previous == keys[position] {
                guard nextFree < .max else {
                    throw StoreError(
                        .full,
                        "row \(rows.id(position)) shares its key with another hierarchy's row and needs an object id of its own, but the ids run up to \(Int64.max); convert the store to SQLite or LMDB, whose keys are per hierarchy",
                        store: store)
                }
                remapped[rows.id(position)] = nextFree
                nextFree += 1
            }
            previous = keys[position]
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
        let written = try writeObjects(
            rows, order: order, ids: ids, store: store, reuse: remapped.isEmpty ? reuse : nil, to: &writer,
            cores: cores ?? ProcessInfo.processInfo.activeProcessorCount)
        writer.raw("</database>\n")
        return (remapped.isEmpty ? written.ranges : nil, written.copied)
    }

    /// The positions of `keys` in ascending key order when the keys are distinct and dense
    /// (primary keys usually are): each placed at its key's offset, O(n). `nil` otherwise.
    static func directOrder(_ keys: [Int64]) -> [Int]? {
        guard let low = keys.min(), let high = keys.max(), high - low < Int64(4 * keys.count + 1_024) else {
            return nil
        }
        var slots = [Int](repeating: -1, count: Int(high - low) + 1)
        for (position, key) in keys.enumerated() {
            let offset = Int(key - low)
            if slots[offset] >= 0 { return nil }  // a key shared by two hierarchies
            slots[offset] = position
        }
        return slots.filter { $0 >= 0 }
    }

    /// Writes the `<object>` elements of `rows` taken in `order` (positions), straight to `writer`.
    func writeRun(
        _ rows: ObjectRows, order: ArraySlice<Int>, ids: ObjectIDs, store: String, to writer: inout XMLByteWriter
    ) throws {
        var entity: Int32 = -1
        var plan: Plan?
        for position in order {
            let row = rows.row(position)
            if row.id.entity != entity {
                entity = row.id.entity
                plan = plans.indices.contains(Int(entity)) ? plans[Int(entity)] : nil
            }
            guard let plan, row.values.count == plan.kinds.count else {
                throw StoreError(.invalidRequest, "row \(row.id) does not fit the model", store: store)
            }
            try write(row, plan: plan, ids: ids, store: store, to: &writer)
            try writer.flushIfFull()
        }
    }

    private func write(_ row: RowSnapshot, plan: Plan, ids: ObjectIDs, store: String, to writer: inout XMLByteWriter)
        throws
    {
        writer.raw(plan.open)
        writer.integer(ids.number(of: row.id))
        if ids.isRemapped(row.id) {
            writer.raw("\" pk=\"")
            writer.integer(row.id.primaryKey)
        }
        writer.raw("\">\n")
        try plan.tags.withUnsafeBufferPointer { tags in
            for slot in 0..<plan.kinds.count {
                let tag = UnsafeBufferPointer(rebasing: tags[plan.ranges[slot]])
                switch plan.kinds[slot] {
                case .skip: continue
                case .attribute:
                    let value = row.values[slot]
                    if value.isNull { continue }
                    writer.raw(tag)
                    if case .string(let text) = value {
                        // Strings are checked once: written escaped, or base64 when XML cannot carry them.
                        if !writer.representableText(text, after: ">") {
                            writer.raw(" encoding=\"base64\">")
                            writer.base64(Data(text.utf8))
                        }
                        writer.raw("</attribute>\n")
                        continue
                    }
                    writer.raw(">")
                    guard XMLValueCoding.write(value, to: &writer) else {
                        throw StoreError(
                            .invalidRequest, "row \(row.id) holds a \(value.kindName) in an attribute", store: store)
                    }
                    writer.raw("</attribute>\n")
                case .relationship:
                    writer.raw(tag)
                    switch row.values[slot] {
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
                            .invalidRequest,
                            "row \(row.id) holds a \(row.values[slot].kindName) in a relationship; the whole graph must be loaded to write it",
                            store: store)
                    }
                    writer.raw("></relationship>\n")
                }
            }
        }
        writer.raw("    </object>\n")
    }
}

/// The rows being written, read where they sit in the state's tables: a position is a table and
/// an index in it, so collecting and ordering them touches keys only, and the rows of chunks a
/// save copies are never read.
struct ObjectRows: Sendable {
    typealias Table = [Int64: RowSnapshot]
    private let tables: [Table]
    private let entities: [Int32]
    /// Each position's primary key.
    private(set) var keys: [Int64] = []
    private var locations: [(table: Int, index: Table.Index)] = []

    /// Every row of `state`, tables in entity order, each table in storage order.
    init(_ state: AtomicStoreEngine.State) {
        entities = state.rows.keys.sorted()
        tables = entities.map { state.rows[$0]! }  // entities come from state.rows
        keys.reserveCapacity(state.count)
        locations.reserveCapacity(state.count)
        for (table, rows) in tables.enumerated() {
            var index = rows.startIndex
            while index != rows.endIndex {
                keys.append(rows.keys[index])
                locations.append((table, index))
                rows.formIndex(after: &index)
            }
        }
    }

    var count: Int { keys.count }

    /// The row at `position`.
    func row(_ position: Int) -> RowSnapshot {
        let location = locations[position]
        return tables[location.table].values[location.index]
    }

    /// The ID of the row at `position`.
    func id(_ position: Int) -> RowID {
        RowID(entity: entities[locations[position].table], primaryKey: keys[position])
    }
}

/// The object number (`zN`) of each row: its primary key, unless another hierarchy's row took it.
struct ObjectIDs: Sendable {
    let remapped: [RowID: Int64]

    func number(of row: RowID) -> Int64 { remapped.isEmpty ? row.primaryKey : remapped[row] ?? row.primaryKey }

    func isRemapped(_ row: RowID) -> Bool { !remapped.isEmpty && remapped[row] != nil }
}
