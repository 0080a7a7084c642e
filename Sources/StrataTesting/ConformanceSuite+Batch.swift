import Foundation
import Strata

extension ConformanceSuite {
    static var batchCases: [ConformanceCase] {
        [
            ConformanceCase(
                "a batch update sets expressions of each matching row, adds 1 to its version and leaves others alone"
            ) { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let before = try storeRows(fixture)
                let predicate = try FetchPredicate(format: "age > 30 AND salary != nil")
                let employee = entity("Employee")
                let expected = try fetch(context, "Employee").filter { try predicate.evaluate(with: $0) }.map(
                    \.objectID.rowID)
                try require(
                    !expected.isEmpty && expected.count < 12, "the predicate picks some employees (\(expected.count))")
                var request = BatchUpdateRequest(entityName: "Employee", predicate: predicate)
                request.propertiesToUpdate = [
                    "age": try FetchExpression(format: "age + 1"), "salary": try FetchExpression(format: "salary * 2"),
                    "email": .constant(.string("batch@example.com")),
                ]
                let changed = try context.execute(request)
                try requireEqual(changed.map(\.rowID).sorted(), expected.sorted(), "IDs the batch update returns")
                let after = try storeRows(fixture)
                try requireEqual(after.count, before.count, "rows after the update")
                let slots = ["age", "salary", "email"].map { employee.index(ofProperty: $0)! }  // in the model
                for (id, old) in before {
                    let new = after[id]!  // same row set, checked above
                    guard expected.contains(id) else {
                        try requireEqual(new, old, "row \(id), which the predicate does not match")
                        continue
                    }
                    try requireEqual(new.version, old.version + 1, "version of \(id)")
                    guard case .integer(let age) = old.values[slots[0]], case .double(let salary) = old.values[slots[1]]
                    else {
                        throw ConformanceFailure(message: "row \(id) has no age or salary", file: #fileID, line: #line)
                    }
                    try requireEqual(new.values[slots[0]], .integer(age + 1), "age of \(id)")
                    try requireEqual(new.values[slots[1]], .double(salary * 2), "salary of \(id)")
                    try requireEqual(new.values[slots[2]], .string("batch@example.com"), "email of \(id)")
                    for slot in old.values.indices where !slots.contains(slot) {
                        try requireEqual(new.values[slot], old.values[slot], "untouched slot \(slot) of \(id)")
                    }
                }
                // The row cache was holding the old rows; a new context must see the new ones.
                let fresh = try fixture.context().existingObject(with: changed[0])
                try requireEqual(
                    fresh.value(forKey: "email") as? String, "batch@example.com", "email seen by a new context")
                let (_, reopened) = try fixture.reopen()
                try requireEqual(
                    try reopened.count(
                        for: FetchRequest(
                            entityName: "Employee",
                            predicate: try FetchPredicate(format: "email == 'batch@example.com'"))),
                    expected.count, "updated employees after reopen")
            },
            ConformanceCase("a batch update covers subentities unless told not to, and may walk relationships") {
                harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                var cars = BatchUpdateRequest(entityName: "Car", propertiesToUpdate: ["wheels": .constant(.integer(3))])
                cars.includesSubentities = false
                try requireEqual(try context.execute(cars).count, 2, "plain cars updated")
                let three = try fetch(fixture.context(), "Vehicle", "wheels == 3", sort: [SortKey("name")])
                try requireEqual(names(three), ["Alpha", "delta"], "vehicles with three wheels")
                let all = BatchUpdateRequest(
                    entityName: "Car", propertiesToUpdate: ["seats": try FetchExpression(format: "seats * 10")])
                try requireEqual(try context.execute(all).count, 4, "cars and sports cars updated")
                let seats = try fetch(fixture.context(), "Car", sort: [SortKey("name")]).map {
                    $0.value(forKey: "seats") as? Int
                }
                // Default string order: upper case before lower case.
                try requireEqual(seats, [20, 60, 30, 50], "seats after the update (Alpha, Epsilon, beta, delta)")
                let sales = BatchUpdateRequest(
                    entityName: "Employee", predicate: try FetchPredicate(format: "department.name == 'Sales'"),
                    propertiesToUpdate: ["salary": try FetchExpression(format: "department.budget + age")])
                let expected = try fetch(fixture.context(), "Employee", "department.name == 'Sales'").map {
                    ($0.value(forKey: "name") as? String ?? "", 1_500.5 + Double($0.value(forKey: "age") as? Int ?? 0))
                }
                try requireEqual(try context.execute(sales).count, expected.count, "Sales employees updated")
                for (name, salary) in expected {
                    let row = try fetch(fixture.context(), "Employee", "name == '\(name)'").first
                    try requireEqual(row?.value(forKey: "salary") as? Double, salary, "salary of \(name)")
                }
            },
            ConformanceCase(
                "a batch update that breaks a type, an optional rule or a unique constraint changes nothing"
            ) { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let before = try storeRows(fixture)
                let attempts: [(String, BatchUpdateRequest, StoreError.Code)] = [
                    (
                        "an Integer 16 overflow",
                        BatchUpdateRequest(
                            entityName: "Employee",
                            propertiesToUpdate: ["age": try FetchExpression(format: "age * 10000")]), .invalidRequest
                    ),
                    (
                        "nil for a non-optional name",
                        BatchUpdateRequest(entityName: "Employee", propertiesToUpdate: ["name": .constant(.null)]),
                        .invalidRequest
                    ),
                    (
                        "a string for a number",
                        BatchUpdateRequest(
                            entityName: "Employee", propertiesToUpdate: ["salary": .constant(.string("lots"))]),
                        .invalidRequest
                    ),
                    (
                        "one name for every tag",
                        BatchUpdateRequest(entityName: "Tag", propertiesToUpdate: ["name": .constant(.string("same"))]),
                        .constraint
                    ),
                    (
                        "a relationship",
                        BatchUpdateRequest(entityName: "Employee", propertiesToUpdate: ["mentor": .constant(.null)]),
                        .invalidRequest
                    ),
                    (
                        "an unknown property",
                        BatchUpdateRequest(
                            entityName: "Employee", propertiesToUpdate: ["height": .constant(.integer(2))]),
                        .invalidRequest
                    ),
                ]
                for (what, request, code) in attempts {
                    try requireThrows(what, matches: { ($0 as? StoreError)?.code == code }) {
                        try context.execute(request)
                    }
                    try require(try storeRows(fixture) == before, "the store is unchanged after \(what)")
                }
            },
            ConformanceCase("a batch delete removes matching rows of a hierarchy without relationships, and only them")
            { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let doomed = try fetch(context, "Vehicle", "wheels == 6 OR name BEGINSWITH[c] 'e' OR name == 'delta'")
                    .map(\.objectID)
                try requireEqual(doomed.count, 3, "vehicles matching")
                let deleted = try context.execute(
                    BatchDeleteRequest(
                        entityName: "Vehicle",
                        predicate: try FetchPredicate(
                            format: "wheels == 6 OR name BEGINSWITH[c] 'e' OR name == 'delta'")))
                try requireEqual(Set(deleted), Set(doomed), "IDs the batch delete returns")
                try requireEqual(
                    try fixture.store.driver.rows(for: doomed.map(\.rowID)).count, 0, "driver rows after the delete")
                try requireEqual(
                    names(try fetch(fixture.context(), "Vehicle", sort: [SortKey("name")])), ["Alpha", "beta"],
                    "vehicles left")
                try requireThrows("a deleted object", matches: { _ in true }) {
                    _ = try fixture.context().existingObject(with: doomed[0])
                }
                let (_, reopened) = try fixture.reopen()
                try requireEqual(
                    try reopened.count(for: FetchRequest(entityName: "Vehicle")), 2, "vehicles after reopen")
            },
            ConformanceCase(
                "a batch delete touching relationships runs delete rules through objects; the driver refuses it alone"
            ) { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let request = StoreBatchRequest(
                    model: ConformanceModel.model, entity: entity("Chapter"), action: .delete)
                try requireThrows(
                    "a driver-level delete of chapters", matches: { ($0 as? StoreError)?.code == .unsupported }
                ) {
                    _ = try fixture.store.driver.execute(request)
                }
                let deleted = try context.execute(
                    BatchDeleteRequest(
                        entityName: "Chapter", predicate: try FetchPredicate(format: "title == 'Chapter 0'")))
                try requireEqual(deleted.count, 1, "chapters deleted")
                let mix = try fetch(fixture.context(), "Playlist")[0]
                try requireEqual(
                    names(mix.objects(forKey: "chapters"), "title"), ["Chapter 2", "Chapter 1"],
                    "chapters left in order")
                let before = try storeRows(fixture)
                let support = BatchDeleteRequest(
                    entityName: "Department", predicate: try FetchPredicate(format: "name == 'support'"))
                try requireThrows(
                    "deleting support, whose Émile still mentors Hélène (deny)",
                    matches: { $0 is ObjectValidationError }
                ) {
                    try context.execute(support)
                }
                try require(try storeRows(fixture) == before, "the store is unchanged after the denied delete")
                let sales = BatchDeleteRequest(
                    entityName: "Department", predicate: try FetchPredicate(format: "name == 'Sales'"))
                try requireEqual(try context.execute(sales).count, 1, "departments deleted")
                try requireEqual(
                    try fetch(fixture.context(), "Department", "name == 'Sales'").count, 0, "Sales after the delete")
                try requireEqual(
                    try fetch(fixture.context(), "Employee").count, 12 - 4,
                    "employees after the cascade of Sales's four employees")
            },
        ]
    }

    /// Every row of the store, through the driver, by ID.
    static func storeRows(_ fixture: Fixture) throws -> [RowID: RowSnapshot] {
        var rows: [RowID: RowSnapshot] = [:]
        for entity in ConformanceModel.model.entities where entity.superentityName == nil {
            for row in try fixture.store.driver.fetch(StoreFetch(entity: entity)).rows { rows[row.id] = row }
        }
        return rows
    }

    static func entity(_ name: String) -> EntityDescription {
        ConformanceModel.model.entity(named: name)!  // the suite names entities of its own model
    }
}
