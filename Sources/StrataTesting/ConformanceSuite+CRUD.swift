import Foundation
import Strata

extension ConformanceSuite {
    static var crudCases: [ConformanceCase] {
        [
            ConformanceCase("a saved insert is visible to a new context") { harness in
                let fixture = try Fixture(harness)
                let employees = try fetch(fixture.context(), "Employee", sort: [SortKey("name")])
                try requireEqual(employees.count, ConformanceModel.employeeNames.count, "employee count")
                try requireEqual(Set(names(employees)), Set(ConformanceModel.employeeNames), "employee names")
                try require(employees.allSatisfy { !$0.objectID.isTemporaryID }, "saved objects have permanent IDs")
            },
            ConformanceCase("an update is saved and the row version grows") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let ann = try fetch(context, "Employee", "name == 'Ann'").first
                try require(ann != nil, "Ann exists")
                let before = try fixture.store.driver.rows(for: [ann!.objectID.rowID]).first?.version ?? -1
                ann!["age"] = 99
                try context.save()
                let after = try fixture.store.driver.rows(for: [ann!.objectID.rowID]).first
                try requireEqual(after?.version, before + 1, "version after one update")
                let again = try fetch(fixture.context(), "Employee", "name == 'Ann'").first
                try requireEqual(again?.value(forKey: "age") as? Int, 99, "age read back")
            },
            ConformanceCase("a delete is saved and the row is gone") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let track = try fetch(context, "Track", "title == 'Track 2'")
                try requireEqual(track.count, 1, "Track 2 found")
                context.delete(track[0])
                try context.save()
                try requireEqual(
                    try fetch(fixture.context(), "Track", "title == 'Track 2'").count, 0, "Track 2 after delete")
                try requireEqual(
                    try fixture.store.driver.rows(for: [track[0].objectID.rowID]).count, 0, "driver row after delete")
            },
            ConformanceCase("a store reopened after close holds every committed change") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let bob = try fetch(context, "Employee", "name == 'bob'")[0]
                bob["email"] = "robert@example.com"
                try context.save()
                let (_, reopened) = try fixture.reopen()
                let again = try fetch(reopened, "Employee", "name == 'bob'")
                try requireEqual(
                    again.first?.value(forKey: "email") as? String, "robert@example.com", "email after reopen")
                try requireEqual(
                    try reopened.count(for: FetchRequest(entityName: "Employee")), 12, "employees after reopen")
                let mix = try fetch(reopened, "Playlist")[0]
                try requireEqual(
                    names(mix.objects(forKey: "tracks"), "title"), ["Track 3", "Track 0", "Track 5", "Track 1"],
                    "ordered tracks after reopen")
            },
            ConformanceCase("primary keys are never handed out twice, even after a failed apply or a reopen") {
                harness in
                let fixture = try Fixture(harness)
                let driver = fixture.store.driver
                let entity = ConformanceModel.model.entity(named: "Tag")!  // in the model
                let existing = try driver.fetch(StoreFetch(entity: entity)).rows
                let used = Set(existing.map(\.id.primaryKey))
                let first = try driver.allocatePrimaryKeys(forEntity: entity.entityNumber, count: 3)
                try require(used.allSatisfy { !first.contains($0) }, "new keys \(first) overlap stored keys \(used)")
                var batch = ChangeBatch()
                var row = existing[0]
                row.id = RowID(entity: entity.entityNumber, primaryKey: first.lowerBound)
                row.values[entity.index(ofProperty: "name")!] = .string("unique \(first.lowerBound)")  // in the model
                batch.inserts = [row]
                batch.deletes = [RowDelete(id: existing[1].id, expectedVersion: existing[1].version + 5)]
                try requireThrows("a batch with a stale delete", matches: { ($0 as? StoreError)?.code == .conflict }) {
                    _ = try driver.apply(batch)
                }
                let second = try driver.allocatePrimaryKeys(forEntity: entity.entityNumber, count: 2)
                try require(second.lowerBound > first.upperBound, "keys \(second) after \(first) and a failed apply")
                let (coordinator, _) = try fixture.reopen()
                let third = try coordinator.persistentStores[0].driver.allocatePrimaryKeys(
                    forEntity: entity.entityNumber, count: 1)
                try require(third.lowerBound > second.upperBound, "keys \(third) after reopening, past \(second)")
            },
            ConformanceCase("close is idempotent") { harness in
                let fixture = try Fixture(harness, seeded: false)
                try fixture.store.driver.close()
                try fixture.store.driver.close()
            },
            ConformanceCase("metadata keeps the store UUID and custom keys across reopen") { harness in
                let fixture = try Fixture(harness, seeded: false)
                var metadata = fixture.store.metadata
                let uuid = metadata.uuid
                metadata.values["AppKey"] = .string("value ü")
                try fixture.coordinator.setMetadata(metadata, for: fixture.store)
                let (coordinator, _) = try fixture.reopen()
                let store = coordinator.persistentStores[0]
                try requireEqual(store.metadata.uuid, uuid, "store UUID")
                try requireEqual(store.metadata.values["AppKey"], .string("value ü"), "custom key")
                try requireEqual(
                    store.metadata.entityVersionHashes, ConformanceModel.model.entityVersionHashesByName, "hashes")
            },
        ]
    }
}
