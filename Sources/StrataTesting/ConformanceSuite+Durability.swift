import Foundation
import Strata

extension ConformanceSuite {
    /// ``StoreDriver`` rules 9 (deferred change sets) and 10 (inserted keys raise the counter).
    static var durabilityCases: [ConformanceCase] {
        [
            ConformanceCase(
                "deferred change sets are checked, applied whole and seen at once, and an empty immediate change set makes them durable"
            ) { harness in
                let fixture = try Fixture(harness)
                let driver = fixture.store.driver
                let tag = entity("Tag")
                let name = tag.index(ofProperty: "name")!  // in the model
                let before = try driver.fetch(StoreFetch(entity: tag)).rows
                // With nothing pending, an empty immediate change set changes nothing.
                _ = try driver.apply(ChangeBatch())
                try requireEqual(try driver.fetch(StoreFetch(entity: tag)).rows.count, before.count, "tags")
                let keys = try driver.allocatePrimaryKeys(forEntity: tag.entityNumber, count: 3)
                var ids: [RowID] = []
                for key in keys {
                    var row = before[0]
                    row.id = RowID(entity: tag.entityNumber, primaryKey: key)
                    row.values[name] = .string("deferred \(key)")
                    var batch = ChangeBatch()
                    batch.inserts = [row]
                    batch.durability = .deferred
                    _ = try driver.apply(batch)
                    ids.append(row.id)
                }
                var update = ChangeBatch()
                var changed = try unwrap(try driver.rows(for: [ids[0]]).first, "the first deferred row")
                try requireEqual(changed.version, 1, "version of a deferred insert")
                changed.values[name] = .string("deferred and changed")
                update.updates = [
                    RowUpdate(id: ids[0], expectedVersion: 1, values: changed.values, changedSlots: [name])
                ]
                update.durability = .deferred
                // An updated row left out of the result has its expected version plus one.
                let reported = try driver.apply(update).versions[ids[0]] ?? 2
                try requireEqual(reported, 2, "version reported after a deferred update")
                try requireEqual(
                    try driver.rows(for: [ids[0]]).first?.version, 2, "version stored after a deferred update")
                var stale = ChangeBatch()
                stale.updates = [
                    RowUpdate(id: ids[1], expectedVersion: 7, values: changed.values, changedSlots: [name])
                ]
                stale.deletes = [RowDelete(id: ids[2], expectedVersion: 1)]
                stale.durability = .deferred
                try requireThrows(
                    "a deferred change set with a stale update", matches: { ($0 as? StoreError)?.code == .conflict }
                ) { _ = try driver.apply(stale) }
                let seen = try driver.rows(for: ids).sorted { $0.id < $1.id }
                try requireEqual(seen.count, 3, "deferred rows seen at once (the failed delete applied nothing)")
                try requireEqual(
                    seen.map { $0.values[name] },
                    [
                        .string("deferred and changed"), .string("deferred \(keys.lowerBound + 1)"),
                        .string("deferred \(keys.upperBound)"),
                    ],
                    "deferred values")
                try requireEqual(
                    try driver.fetch(StoreFetch(entity: tag)).rows.count, before.count + 3, "tags fetched")
                _ = try driver.apply(ChangeBatch())
                let (coordinator, _) = try fixture.reopen()
                let reopened = try coordinator.persistentStores[0].driver.rows(for: ids).sorted { $0.id < $1.id }
                // Versions are not compared: a format may keep none (XML rows reopen at version 1).
                try requireEqual(reopened.count, 3, "deferred rows after reopening")
                try requireEqual(
                    reopened.map { $0.values[name] }, seen.map { $0.values[name] }, "values after reopening")
            },
            ConformanceCase(
                "a row inserted with a key the driver did not hand out raises the counter, deferred or not, across a reopen"
            ) { harness in
                let fixture = try Fixture(harness)
                let driver = fixture.store.driver
                let tag = entity("Tag")
                let name = tag.index(ofProperty: "name")!  // in the model
                let existing = try driver.fetch(StoreFetch(entity: tag)).rows
                let largest = existing.map(\.id.primaryKey).max() ?? 0
                func insert(_ key: Int64, _ durability: ChangeBatch.Durability) throws {
                    var row = existing[0]
                    row.id = RowID(entity: tag.entityNumber, primaryKey: key)
                    row.values[name] = .string("copied \(key)")
                    var batch = ChangeBatch()
                    batch.inserts = [row]
                    batch.durability = durability
                    _ = try driver.apply(batch)
                }
                try insert(largest + 1_000, .immediate)
                let first = try driver.allocatePrimaryKeys(forEntity: tag.entityNumber, count: 2)
                try require(first.lowerBound > largest + 1_000, "keys \(first) after inserting key \(largest + 1_000)")
                try insert(first.upperBound + 5_000, .deferred)
                let second = try driver.allocatePrimaryKeys(forEntity: tag.entityNumber, count: 1)
                try require(
                    second.lowerBound > first.upperBound + 5_000,
                    "keys \(second) after a deferred insert of key \(first.upperBound + 5_000)")
                _ = try driver.apply(ChangeBatch())
                let (coordinator, _) = try fixture.reopen()
                let third = try coordinator.persistentStores[0].driver.allocatePrimaryKeys(
                    forEntity: tag.entityNumber, count: 1)
                try require(third.lowerBound > second.upperBound, "keys \(third) after reopening, past \(second)")
            },
        ]
    }
}
