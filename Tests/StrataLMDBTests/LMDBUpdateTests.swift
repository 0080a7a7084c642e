import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataLMDB

/// Updates and deletes done from the change alone (entities with no relationship entries, index
/// entries or unique constraints) against those that read the stored row first: both leave the
/// rows they should, and a change set naming a row twice writes nothing either way.
@Suite("LMDB updates and deletes")
struct LMDBUpdateTests {
    /// `Note` is plain (attributes only); `Tagged` has an index on `rank`, so its updates read the
    /// stored row to move the index entry.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Note",
                properties: [
                    .attribute("text", .string), .attribute("rank", .integer64), .attribute("score", .double),
                ]),
            EntityDescription(
                "Tagged", properties: [.attribute("name", .string), .attribute("rank", .integer64)],
                indexes: [FetchIndexDescription(name: "byRank", elements: [.init("rank")])]),
        ])
    }

    /// A driver on a new store with `count` rows of each entity, version 1.
    static func seeded(_ directory: TemporaryDirectory, count: Int) throws -> (LMDBDriver, ManagedObjectModel) {
        let model = try model()
        let driver = try LMDBDriverFactory().open(
            url: directory.file("updates.lmdb"), model: model, options: StoreOptions())
        var batch = ChangeBatch()
        for name in ["Note", "Tagged"] {
            let entity = try #require(model.entity(named: name))
            let keys = try driver.allocatePrimaryKeys(forEntity: entity.entityNumber, count: count)
            for key in keys {
                let values: [StoreValue] =
                    name == "Note"
                    ? [.string("note \(key)"), .integer(key), .double(Double(key) / 4)]
                    : [.string("tagged \(key)"), .integer(key)]
                batch.inserts.append(
                    RowSnapshot(id: RowID(entity: entity.entityNumber, primaryKey: key), version: 1, values: values))
            }
        }
        _ = try driver.apply(batch)
        return (driver, model)
    }

    /// Applies `batch`, which must fail with `code`, and checks the rows of `entity` are still
    /// `before`; returns the error.
    @discardableResult
    static func expectRefused(
        _ batch: ChangeBatch, by driver: LMDBDriver, code: StoreError.Code, entity: EntityDescription,
        before: [RowSnapshot]
    ) throws -> StoreError {
        let error = try #require(throws: StoreError.self, "\(entity.name)") { try driver.apply(batch) }
        #expect(error.code == code, "\(entity.name): \(error)")
        #expect(try driver.fetch(StoreFetch(entity: entity)).rows == before, "\(entity.name): the store is unchanged")
        return error
    }

    @Test("updates of a plain entity and of an indexed one store the new values and the next version")
    func updatesStoreValues() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-updates")
        let (driver, model) = try Self.seeded(directory, count: 200)
        defer { try? driver.close() }
        let note = try #require(model.entity(named: "Note"))
        let tagged = try #require(model.entity(named: "Tagged"))
        var batch = ChangeBatch()
        for key in stride(from: Int64(1), through: 200, by: 3) {
            batch.updates.append(
                RowUpdate(
                    id: RowID(entity: note.entityNumber, primaryKey: key), expectedVersion: 1,
                    values: [.string("note \(key) changed"), .integer(key), .double(-1)], changedSlots: [0, 2]))
            batch.updates.append(
                RowUpdate(
                    id: RowID(entity: tagged.entityNumber, primaryKey: key), expectedVersion: 1,
                    values: [.string("tagged \(key)"), .integer(1_000 + key)], changedSlots: [1]))
        }
        _ = try driver.apply(batch)
        for entity in [note, tagged] {
            let rows = try driver.fetch(StoreFetch(entity: entity)).rows
            #expect(rows.count == 200)
            for row in rows {
                let key = row.id.primaryKey
                let changed = key % 3 == 1
                #expect(row.version == (changed ? 2 : 1), "\(entity.name) \(key)")
                let expected: [StoreValue] =
                    entity === note
                    ? (changed
                        ? [.string("note \(key) changed"), .integer(key), .double(-1)]
                        : [.string("note \(key)"), .integer(key), .double(Double(key) / 4)])
                    : [.string("tagged \(key)"), .integer(changed ? 1_000 + key : key)]
                #expect(row.values == expected, "\(entity.name) \(key)")
            }
        }
        // The index followed the indexed entity's updates: rank 1,001 is row 1, and rank 1 is gone.
        var request = StoreFetch(entity: tagged)
        request.predicate = try FetchPredicate(format: "rank == 1001 OR rank == 1")
        #expect(try driver.fetch(request).rows.map(\.id.primaryKey) == [1])
    }

    @Test("a change set that updates a row it also deletes writes nothing, whichever way the update is written")
    func updateOfRowDeletedInTheSameBatch() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-updates")
        let (driver, model) = try Self.seeded(directory, count: 10)
        defer { try? driver.close() }
        for name in ["Note", "Tagged"] {
            let entity = try #require(model.entity(named: name))
            let id = RowID(entity: entity.entityNumber, primaryKey: 4)
            let before = try driver.fetch(StoreFetch(entity: entity)).rows
            var batch = ChangeBatch()
            batch.deletes.append(RowDelete(id: id, expectedVersion: 1))
            batch.updates.append(
                RowUpdate(id: id, expectedVersion: 1, values: before[3].values, changedSlots: [1]))
            // A second row changed before the failure must not stay changed either.
            var other = before[0].values
            other[0] = .string("changed before the failure")
            batch.updates.insert(
                RowUpdate(id: before[0].id, expectedVersion: 1, values: other, changedSlots: [0]), at: 0)
            let error = try Self.expectRefused(batch, by: driver, code: .corrupt, entity: entity, before: before)
            #expect(error.message.contains("disappeared during the save"), "\(name): \(error.message)")
        }
    }

    @Test("deletes of a plain entity and of an indexed one remove the rows and the index entries")
    func deletes() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-updates")
        let (driver, model) = try Self.seeded(directory, count: 50)
        defer { try? driver.close() }
        var batch = ChangeBatch()
        for name in ["Note", "Tagged"] {
            let entity = try #require(model.entity(named: name))
            for key in stride(from: Int64(2), through: 50, by: 2) {
                batch.deletes.append(
                    RowDelete(id: RowID(entity: entity.entityNumber, primaryKey: key), expectedVersion: 1))
            }
        }
        _ = try driver.apply(batch)
        for name in ["Note", "Tagged"] {
            let entity = try #require(model.entity(named: name))
            let keys = try driver.fetch(StoreFetch(entity: entity)).rows.map(\.id.primaryKey)
            #expect(keys == Array(stride(from: Int64(1), through: 49, by: 2)), "\(name)")
        }
        var request = StoreFetch(entity: try #require(model.entity(named: "Tagged")))
        request.predicate = try FetchPredicate(format: "rank == 2 OR rank == 3")
        #expect(try driver.fetch(request).rows.map(\.id.primaryKey) == [3], "the deleted row's index entry is gone")
    }

    @Test("a change set that deletes a row twice writes nothing, whichever way the delete is done")
    func doubleDelete() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-updates")
        let (driver, model) = try Self.seeded(directory, count: 10)
        defer { try? driver.close() }
        for name in ["Note", "Tagged"] {
            let entity = try #require(model.entity(named: name))
            let before = try driver.fetch(StoreFetch(entity: entity)).rows
            var batch = ChangeBatch()
            batch.deletes = [
                RowDelete(id: before[1].id, expectedVersion: 1), RowDelete(id: before[5].id, expectedVersion: 1),
                RowDelete(id: before[5].id, expectedVersion: 1),
            ]
            try Self.expectRefused(batch, by: driver, code: .corrupt, entity: entity, before: before)
        }
    }

    @Test("an update against a version the store no longer holds is a conflict and writes nothing")
    func staleUpdate() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-updates")
        let (driver, model) = try Self.seeded(directory, count: 10)
        defer { try? driver.close() }
        let note = try #require(model.entity(named: "Note"))
        let before = try driver.fetch(StoreFetch(entity: note)).rows
        var batch = ChangeBatch()
        batch.updates.append(
            RowUpdate(
                id: before[2].id, expectedVersion: 7, values: [.string("late"), .integer(3), .double(0)],
                changedSlots: [0]))
        try Self.expectRefused(batch, by: driver, code: .conflict, entity: note, before: before)
    }
}
