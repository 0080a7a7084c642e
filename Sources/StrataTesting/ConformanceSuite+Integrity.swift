import Foundation
import Strata

extension ConformanceSuite {
    static var integrityCases: [ConformanceCase] {
        [
            ConformanceCase("a stale update is rejected, names the object, and leaves the store unchanged") { harness in
                let fixture = try Fixture(harness)
                let first = fixture.context()
                let second = fixture.context()
                let a = try fetch(first, "Employee", "name == 'Dan'")[0]
                let b = try fetch(second, "Employee", "name == 'Dan'")[0]
                _ = b.value(forKey: "age")
                a["age"] = 50
                try first.save()
                b["age"] = 60
                b["email"] = "stale@example.com"
                try requireThrows(
                    "saving a stale object",
                    matches: { error in
                        guard let error = error as? StoreError else { return false }
                        return error.code == .conflict && error.objectIDs.contains { $0.rowID == b.objectID.rowID }
                    }
                ) { try second.save() }
                let stored = try fetch(fixture.context(), "Employee", "name == 'Dan'")[0]
                try requireEqual(stored.value(forKey: "age") as? Int, 50, "age after the refused save")
                try requireEqual(stored.value(forKey: "email") as? String, nil, "email after the refused save")
            },
            ConformanceCase("a change set with one stale row applies nothing at all") { harness in
                let fixture = try Fixture(harness)
                let driver = fixture.store.driver
                let entity = ConformanceModel.model.entity(named: "Track")!  // in the model
                let rows = try driver.fetch(StoreFetch(entity: entity)).rows.sorted { $0.id < $1.id }
                try require(rows.count >= 2, "tracks exist")
                let keys = try driver.allocatePrimaryKeys(forEntity: entity.entityNumber, count: 1)
                var batch = ChangeBatch()
                var inserted = rows[0]
                inserted.id = RowID(entity: entity.entityNumber, primaryKey: keys.lowerBound)
                batch.inserts = [inserted]
                var values = rows[0].values
                values[entity.index(ofProperty: "title")!] = .string("changed")  // in the model
                batch.updates = [
                    RowUpdate(
                        id: rows[0].id, expectedVersion: rows[0].version, values: values,
                        changedSlots: [entity.index(ofProperty: "title")!])
                ]  // in the model
                batch.deletes = [RowDelete(id: rows[1].id, expectedVersion: rows[1].version + 7)]
                try requireThrows("a batch with a stale delete", matches: { ($0 as? StoreError)?.code == .conflict }) {
                    _ = try driver.apply(batch)
                }
                let after = try driver.fetch(StoreFetch(entity: entity)).rows.sorted { $0.id < $1.id }
                try requireEqual(after.map(\.id), rows.map(\.id), "rows after the failed batch")
                try requireEqual(after.map(\.version), rows.map(\.version), "versions after the failed batch")
                try requireEqual(after[0].values, rows[0].values, "values after the failed batch")
            },
            ConformanceCase("versions start at 1 and grow by one per applied update") { harness in
                let fixture = try Fixture(harness, seeded: false)
                let context = fixture.context()
                let tag = try context.insertNewObject(forEntityName: "Tag")
                tag["name"] = "v"
                try context.save()
                var versions: [RowVersion] = []
                for round in 0..<3 {
                    versions.append(try fixture.store.driver.rows(for: [tag.objectID.rowID]).first?.version ?? -1)
                    tag["name"] = "v\(round)"
                    try context.save()
                }
                try requireEqual(versions, [1, 2, 3], "versions")
            },
            ConformanceCase("validation failures are all reported together and nothing is saved") { harness in
                let fixture = try Fixture(harness, seeded: false)
                let context = fixture.context()
                let department = try context.insertNewObject(forEntityName: "Department")
                _ = department
                let employee = try context.insertNewObject(forEntityName: "Employee")
                employee["age"] = 30
                let tag = try context.insertNewObject(forEntityName: "Tag")
                _ = tag
                do {
                    try context.save()
                    throw ConformanceFailure(message: "save with missing names succeeded", file: #fileID, line: #line)
                } catch let error as ObjectValidationError {
                    try requireEqual(
                        error.failures.filter { $0.code == .missingMandatoryProperty }.count, 3, "missing names")
                }
                try requireEqual(
                    try fixture.context().count(for: FetchRequest(entityName: "Employee")), 0, "employees stored")
            },
            ConformanceCase("unique constraints are checked against saved rows") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let tag = try context.insertNewObject(forEntityName: "Tag")
                tag["name"] = "red"
                try requireThrows(
                    "a second tag named red",
                    matches: { ($0 as? ObjectValidationError)?.failures.first?.code == .uniqueConstraint }
                ) {
                    try context.save()
                }
                tag["name"] = "purple"
                try context.save()
            },
            ConformanceCase("row cache hits serve repeated lookups without the driver") { harness in
                let fixture = try Fixture(harness)
                let ids = try fixture.context().fetchObjectIDs(FetchRequest(entityName: "Employee"))
                let warm = fixture.context()
                for id in ids { _ = try warm.existingObject(with: id) }
                let before = fixture.coordinator.rowCache.statistics
                let cold = fixture.context()
                for id in ids { _ = try cold.existingObject(with: id) }
                let after = fixture.coordinator.rowCache.statistics
                try requireEqual(after.hits - before.hits, ids.count, "cache hits for a second context")
                try requireEqual(after.misses - before.misses, 0, "cache misses for a second context")
            },
        ]
    }
}
