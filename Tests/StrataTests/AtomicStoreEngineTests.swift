import Foundation
import Strata
import StrataTesting
import Testing

@Suite("Atomic store engine")
struct AtomicStoreEngineTests {
    /// An engine holding the conformance model's seeded tags, with its state.
    static func engine() throws -> (AtomicStoreEngine, EntityDescription) {
        let tag = try #require(ConformanceModel.model.entity(named: "Tag"))
        var state = AtomicStoreEngine.State(metadata: StoreMetadata(uuid: "engine-test", storeType: "test"))
        for key in Int64(1)...5 {
            var values = tag.defaultValues
            values[tag.index(ofProperty: "name")!] = .string("tag \(key)")  // in the model
            state.rows[tag.entityNumber, default: [:]][key] = RowSnapshot(
                id: RowID(entity: tag.entityNumber, primaryKey: key), version: 1, values: values)
        }
        state.maxKeys[tag.entityNumber] = 5
        return (AtomicStoreEngine(model: ConformanceModel.model, storeName: "engine", state: state), tag)
    }

    struct PersistFailed: Error {}

    @Test(
        "a persist that fails leaves rows, keys and metadata exactly as they were; one that succeeds sees the new state"
    )
    func failedPersistRestores() throws {
        let (engine, tag) = try Self.engine()
        let before = engine.snapshot
        let nameSlot = try #require(tag.index(ofProperty: "name"))
        var batch = ChangeBatch()
        var updated = try #require(before.row(RowID(entity: tag.entityNumber, primaryKey: 2)))
        updated.values[nameSlot] = .string("renamed")
        batch.updates = [
            RowUpdate(id: updated.id, expectedVersion: 1, values: updated.values, changedSlots: [nameSlot])
        ]
        batch.deletes = [RowDelete(id: RowID(entity: tag.entityNumber, primaryKey: 4), expectedVersion: 1)]
        var inserted = updated
        inserted.id = RowID(entity: tag.entityNumber, primaryKey: 9)
        batch.inserts = [inserted]
        var newMetadata = before.metadata
        newMetadata.values["k"] = .string("v")
        batch.metadata = newMetadata
        var seen: AtomicStoreEngine.State?
        #expect(throws: PersistFailed.self) {
            _ = try engine.apply(batch) { state in
                seen = state
                throw PersistFailed()
            }
        }
        #expect(seen?.row(updated.id)?.values[nameSlot] == .string("renamed"), "persist saw the new state")
        #expect(seen?.row(RowID(entity: tag.entityNumber, primaryKey: 4)) == nil)
        let after = engine.snapshot
        #expect(after.allRows == before.allRows)
        #expect(after.maxKeys == before.maxKeys)
        #expect(after.metadata.values == before.metadata.values)
        _ = try engine.apply(batch) { _ in }
        let applied = engine.snapshot
        #expect(applied.row(updated.id)?.version == 2)
        #expect(applied.row(inserted.id) != nil && applied.maxKeys[tag.entityNumber] == 9)
        #expect(applied.row(RowID(entity: tag.entityNumber, primaryKey: 4)) == nil)
    }
}

@Suite("Atomic store engine: counters at their ends")
struct AtomicStoreEngineLimitTests {
    @Test("a key counter at Int64.max is a full store, not an overflow")
    func keyCounterAtMax() throws {
        let model = ConformanceModel.model
        let tag = try #require(model.entity(named: "Tag"))
        var state = AtomicStoreEngine.State(metadata: StoreMetadata(storeType: "Test"))
        state.maxKeys[tag.entityNumber] = .max - 1
        let engine = AtomicStoreEngine(model: model, storeName: "limits", state: state)
        #expect(try engine.allocatePrimaryKeys(forEntity: tag.entityNumber, count: 1) == Int64.max...Int64.max)
        #expect { _ = try engine.allocatePrimaryKeys(forEntity: tag.entityNumber, count: 1) } throws: {
            ($0 as? StoreError)?.code == .full
        }
    }

    @Test("a row at the last version refuses an update instead of overflowing")
    func versionAtMax() throws {
        let model = ConformanceModel.model
        let tag = try #require(model.entity(named: "Tag"))
        var state = AtomicStoreEngine.State(metadata: StoreMetadata(storeType: "Test"))
        let id = RowID(entity: tag.entityNumber, primaryKey: 1)
        state.rows[tag.entityNumber] = [1: RowSnapshot(id: id, version: .max, values: [.string("t"), .references([])])]
        let engine = AtomicStoreEngine(model: model, storeName: "limits", state: state)
        var batch = ChangeBatch()
        batch.updates = [
            RowUpdate(id: id, expectedVersion: .max, values: [.string("u"), .references([])], changedSlots: [0])
        ]
        #expect { _ = try engine.apply(batch) } throws: { ($0 as? StoreError)?.code == .corrupt }
    }
}
