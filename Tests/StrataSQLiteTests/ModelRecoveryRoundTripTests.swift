import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataSQLite

/// A store Strata wrote, opened without its model: the model inferred from its tables maps onto
/// the same tables and columns as the model that wrote it, and reads the same rows.
@Suite("Model recovery round trip")
struct ModelRecoveryRoundTripTests {
    static let models: [(String, ManagedObjectModel, @Sendable (ManagedObjectContext) throws -> Void)] = [
        ("shapes", ConformanceShapesModel.model, ConformanceShapesModel.seed),
        ("collisions", ConformanceShapesModel.collisions, ConformanceShapesModel.seedCollisions),
        ("join named like an attribute", joinNamedLikeAttribute, seedJoinNamedLikeAttribute),
    ]

    /// The least each model compares: (columns, joins).
    static let minimumCompared = [(6, 10), (20, 4), (3, 2)]

    /// Round-trip seed 1 (the round-trip suite, docs/compatibility.md): relationships `Label` ↔ `_id` in join table
    /// `Z_3LABEL`, on a subentity of an entity with attribute `label` (column `ZLABEL`), so the
    /// join's relationship and the attribute are both `LABEL` once upper-cased.
    static let joinNamedLikeAttribute: ManagedObjectModel = {
        let from = EntityDescription("From", isAbstract: true, properties: [.attribute("label", .string)])
        let note = EntityDescription("Note", parent: "From")
        let tag = EntityDescription(
            "TAG", parent: "Note",
            properties: [
                .toMany("Label", "TAG", inverse: "_id", ordered: true),
                .toMany("_id", "TAG", inverse: "Label", ordered: true),
                .toMany("links", "TAG", inverse: "links"), .attribute("LINKS", .integer64),
            ])
        // Fixed and valid: building it cannot fail.
        return try! ManagedObjectModel(entities: [from, note, tag])
    }()

    @Sendable static func seedJoinNamedLikeAttribute(_ context: ManagedObjectContext) throws {
        let a = try context.insertNewObject(forEntityName: "TAG")
        let b = try context.insertNewObject(forEntityName: "TAG")
        a["label"] = "a"
        b["label"] = "b"
        a["LINKS"] = Int64(3)
        a.addObject(b, toRelationship: "Label")
        a.addObject(a, toRelationship: "Label")
        b.addObject(a, toRelationship: "links")
        try context.save()
    }

    /// How one slot is stored, in the store's own terms.
    enum Storage: Hashable, CustomStringConvertible {
        case column(table: String, column: String)
        case join(table: String, source: String, member: String, order: String?)
        case foreignKey(table: String, column: String, order: String?)

        var description: String {
            switch self {
            case .column(let table, let column): "\(table).\(column)"
            case .join(let table, let source, let member, let order): "\(table)(\(source) → \(member), \(order ?? "-"))"
            case .foreignKey(let table, let column, let order): "\(table).\(column) (\(order ?? "-"))"
            }
        }
    }

    static func storage(_ slot: SlotLayout, table: String) -> [Storage] {
        switch slot {
        case .attribute(let column, _, _): [.column(table: table, column: column)]
        case .toOne(let column, _, let entityColumn, _, _):
            [.column(table: table, column: column)] + (entityColumn.map { [.column(table: table, column: $0)] } ?? [])
        case .toManyJoin(let join):
            [.join(table: join.table, source: join.sourceColumn, member: join.memberColumn, order: join.orderColumn)]
        case .toManyForeignKey(let fk): [.foreignKey(table: fk.table, column: fk.column, order: fk.orderColumn)]
        case .none, .missing: []
        }
    }

    /// The driver opened read-only with `model` (straight from the factory: a coordinator would
    /// refuse the inferred model, whose version hashes are not the store's).
    static func driver(_ model: ManagedObjectModel, _ path: String) throws -> SQLiteDriver {
        let request = StoreOpenRequest(
            url: URL(fileURLWithPath: path), model: model, configuration: nil, options: StoreOptions(isReadOnly: true))
        return try #require(try SQLiteDriverFactory().makeDriver(request) as? SQLiteDriver)
    }

    /// A value with references reduced to their keys (an inferred model may read a foreign key as an integer).
    static func plain(_ value: StoreValue) -> StoreValue {
        if case .reference(let id) = value { return .integer(id.primaryKey) }
        return value
    }

    @Test(
        "the inferred model maps every column and join table the writing model maps, and reads the same values",
        arguments: [0, 1, 2])
    func roundTrip(_ index: Int) throws {
        let (name, model, seed) = Self.models[index]
        let directory = try TemporaryDirectory(prefix: "recovery-round-trip")
        let path = directory.file("\(name).sqlite").path
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path))
            try seed(ManagedObjectContext(coordinator: coordinator))
            try coordinator.remove(store)
        }
        let recovered = try StoreModelRecovery.recoverModel(fromStoreAt: path)
        #expect(recovered.source == .inferred)
        let original = try Self.driver(model, path)
        let inferred = try Self.driver(recovered.model, path)
        defer {
            try? original.close()  // read-only connections; nothing to lose
            try? inferred.close()
        }

        // Tables and their columns.
        #expect(
            Set(original.layout.tables.values.map(\.name)) == Set(inferred.layout.tables.values.map(\.name)),
            "\(name): tables")
        for table in original.layout.tables.values {
            let other = inferred.layout.tables.values.first { $0.name == table.name }
            #expect(
                Set(table.columns.map(\.name)) == Set(other?.columns.map(\.name) ?? []),
                "\(name): columns of \(table.name)")
        }
        // A join table read as the other side of its pair lists its two key columns the other way round.
        func sides(_ join: JoinTable) -> String {
            let columns = [(join.firstColumn, join.firstOrderColumn), (join.secondColumn, join.secondOrderColumn)]
            return join.name + columns.map { "|\($0.0) \($0.1 ?? "-")" }.sorted().joined()
        }
        #expect(
            Set(original.layout.joinTables.values.map(sides)) == Set(inferred.layout.joinTables.values.map(sides)),
            "\(name): join tables")

        // Every slot of the writing model is stored where a slot of the inferred model is, and
        // every slot of the inferred model reads from a column or join the writing model uses.
        var inferredSlots: [Storage: (EntityDescription, Int)] = [:]
        for layout in inferred.layout.entities.values {
            for (slot, storage) in layout.slots.enumerated() {
                for stored in Self.storage(storage, table: layout.table) {
                    inferredSlots[stored] = inferredSlots[stored] ?? (layout.entity, slot)
                }
            }
        }
        var originalStorage: Set<Storage> = []
        for layout in original.layout.entities.values {
            for (slot, storage) in layout.slots.enumerated() {
                for stored in Self.storage(storage, table: layout.table) {
                    originalStorage.insert(stored)
                    guard case .join = stored else {
                        if case .foreignKey = stored { continue }  // the to-many side of a one-to-many leaves no trace
                        #expect(
                            inferredSlots[stored] != nil,
                            "\(name): \(layout.entity.name).\(layout.entity.properties[slot].name) in \(stored)")
                        continue
                    }
                    #expect(
                        inferredSlots[stored] != nil,
                        "\(name): \(layout.entity.name).\(layout.entity.properties[slot].name) in \(stored)")
                }
            }
        }
        for stored in inferredSlots.keys {
            if case .join(let table, let source, let member, _) = stored {
                let known = originalStorage.contains { if case .join(table, _, _, _) = $0 { true } else { false } }
                #expect(known, "\(name): inferred join \(table)(\(source) → \(member))")
            } else {
                #expect(originalStorage.contains(stored), "\(name): inferred storage \(stored)")
            }
        }

        // The same rows, column by column, and the same members of every join.
        var compared = (columns: 0, joins: 0)
        for entity in model.entities where !entity.isAbstract {
            let other = try #require(recovered.model.entity(named: entity.name))
            var fetch = StoreFetch(entity: entity)
            fetch.includesSubentities = false
            var otherFetch = StoreFetch(entity: other)
            otherFetch.includesSubentities = false
            let rows = try original.fetch(fetch).rows.sorted { $0.id.primaryKey < $1.id.primaryKey }
            let otherRows = try inferred.fetch(otherFetch).rows.sorted { $0.id.primaryKey < $1.id.primaryKey }
            #expect(rows.map(\.id.primaryKey) == otherRows.map(\.id.primaryKey), "\(name): rows of \(entity.name)")
            guard let layout = original.layout.entity(entity.entityNumber),
                let otherLayout = inferred.layout.entity(other.entityNumber)
            else { continue }
            for (slot, storage) in layout.slots.enumerated() {
                for stored in Self.storage(storage, table: layout.table) {
                    guard
                        let otherSlot = otherLayout.slots.indices.first(where: {
                            Self.storage(otherLayout.slots[$0], table: otherLayout.table).contains(stored)
                        })
                    else { continue }
                    let property = "\(entity.name).\(entity.properties[slot].name)"
                    switch stored {
                    case .column:
                        guard case .toOne(_, _, let entityColumn, _, _) = storage,
                            stored == .column(table: layout.table, column: entityColumn ?? "")
                        else {
                            #expect(
                                rows.map { Self.plain($0.values[slot]) }
                                    == otherRows.map { Self.plain($0.values[otherSlot]) }, "\(name): \(property)")
                            compared.columns += 1
                            continue
                        }
                    case .join:
                        let members = try original.relatedRows(
                            RelatedRowsRequest(entity: entity, slot: slot, sources: rows.map(\.id)))
                        let otherMembers = try inferred.relatedRows(
                            RelatedRowsRequest(entity: other, slot: otherSlot, sources: otherRows.map(\.id)))
                        for (row, otherRow) in zip(rows, otherRows) {
                            #expect(
                                members[row.id]?.map(\.primaryKey) == otherMembers[otherRow.id]?.map(\.primaryKey),
                                "\(name): \(property) of \(row.id.primaryKey)")
                        }
                        compared.joins += 1
                    case .foreignKey: continue
                    }
                }
            }
        }
        print("round trip of \(name): \(compared.columns) columns and \(compared.joins) joins compared")
        #expect(compared.columns >= Self.minimumCompared[index].0 && compared.joins >= Self.minimumCompared[index].1)
    }
}
