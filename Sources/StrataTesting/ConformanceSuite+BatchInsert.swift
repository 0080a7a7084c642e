import Foundation
import Strata

extension ConformanceSuite {
    static var batchInsertCases: [ConformanceCase] {
        [
            ConformanceCase(
                "a batch insert stores each object with its defaults, converts values, and tells no context"
            ) { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let watching = try fetch(context, "Car")
                let registeredBefore = Set(context.registeredObjects.map(\.objectID))
                var request = BatchInsertRequest(
                    entityName: "Car",
                    objects: [
                        ["name": "Zeta", "seats": 5],
                        ["name": "Eta", "seats": Int16(7), "wheels": StoreValue.integer(3)],
                        ["name": "Theta"],
                    ])
                request.resultType = .objectIDs
                let result = try context.execute(request)
                let ids = try unwrap(result.objectIDs, "object IDs of the result")
                try requireEqual(ids.count, 3, "object IDs returned")
                try requireEqual(result.changes.insertedObjectIDs, ids, "the inserted IDs to merge")
                try requireEqual(Set(ids.map(\.rowID)).count, 3, "distinct row IDs")
                // No context was told: the executing context registered nothing new; a fetch reads
                // the store and sees the rows.
                try requireEqual(
                    Set(context.registeredObjects.map(\.objectID)), registeredBefore,
                    "objects registered in the executing context")
                withExtendedLifetime(watching) {}
                let rows = try fixture.store.driver.rows(for: ids.map(\.rowID))
                try requireEqual(rows.count, 3, "rows in the store")
                let car = entity("Car")
                let slot = { (name: String) in car.index(ofProperty: name)! }  // in the model
                for row in rows { try requireEqual(row.version, 1, "version of new row \(row.id)") }
                let byName = Dictionary(uniqueKeysWithValues: rows.map { ($0.values[slot("name")], $0) })
                try requireEqual(
                    byName[.string("Zeta")]?.values[slot("wheels")], .integer(4), "Zeta's wheels (the default)")
                try requireEqual(byName[.string("Zeta")]?.values[slot("seats")], .integer(5), "Zeta's seats")
                try requireEqual(byName[.string("Eta")]?.values[slot("wheels")], .integer(3), "Eta's wheels")
                try requireEqual(byName[.string("Theta")]?.values[slot("seats")], .null, "Theta's seats (no default)")
                try requireEqual(
                    names(try fetch(fixture.context(), "Car", "wheels != 6", sort: [SortKey("name")])).filter {
                        ["Zeta", "Eta", "Theta"].contains($0)
                    },
                    ["Eta", "Theta", "Zeta"], "new cars fetched by a new context")
                let merged = fixture.context()
                _ = try fetch(merged, "Car")
                merged.mergeChanges(fromContextDidSave: result.changes)
                try requireEqual(
                    try merged.existingObject(with: ids[2]).value(forKey: "name") as? String, "Theta",
                    "a merged new object")
                let (_, reopened) = try fixture.reopen()
                try requireEqual(
                    try reopened.count(
                        for: FetchRequest(
                            entityName: "Car", predicate: try FetchPredicate(format: "name IN {'Zeta', 'Eta', 'Theta'}")
                        )), 3, "new cars after reopen")
            },
            ConformanceCase("a batch insert from a handler stops when it returns true, and counts what it stored") {
                harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let counter = Counter()
                var request = BatchInsertRequest(entityName: "Track") { object in
                    let index = counter.next()
                    guard index < 250 else { return true }
                    object["title"] = "track \(index)"
                    return false
                }
                request.resultType = .count
                try requireEqual(try context.execute(request).count, 250, "count of the result")
                try requireEqual(counter.value, 251, "handler calls")
                let titles = Set(
                    try fetch(fixture.context(), "Track", "title BEGINSWITH 'track '").compactMap {
                        $0.value(forKey: "title") as? String
                    })
                try requireEqual(titles.count, 250, "distinct new tracks")
                try require(titles.contains("track 0") && titles.contains("track 249"), "first and last track stored")
                let empty = BatchInsertRequest(entityName: "Track", objects: [])
                try requireEqual(try context.execute(empty).status, true, "status of an empty insert")
                try requireEqual(
                    try fetch(fixture.context(), "Track", "title BEGINSWITH 'track '").count, 250,
                    "new tracks after an empty insert")
            },
            ConformanceCase(
                "a batch insert from a managed object handler stores what it sets over the defaults, and checks it"
            ) { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let counter = Counter()
                let leftovers = Counter()
                var request = BatchInsertRequest(entityName: "Car") { (object: ManagedObject) -> Bool in
                    let index = counter.next()
                    guard index < 300 else { return true }
                    if object["name"] as String? != nil || object["seats"] as Int? != nil { _ = leftovers.next() }
                    object["name"] = "handled \(index)"
                    if index % 2 == 0 { object["seats"] = index % 9 }
                    if index == 7 { object.setValue(StoreValue.integer(3), forKey: "wheels") }
                    return false
                }
                request.resultType = .objectIDs
                let result = try context.execute(request)
                try requireEqual(counter.value, 301, "handler calls")
                try requireEqual(leftovers.value, 0, "calls whose object held values of an earlier call")
                let ids = try unwrap(result.objectIDs, "object IDs of the result")
                try requireEqual(ids.count, 300, "objects stored")
                let car = entity("Car")
                let slot = { (name: String) in car.index(ofProperty: name)! }  // in the model
                let rows = try fixture.store.driver.rows(for: ids.map(\.rowID))
                let byName = Dictionary(uniqueKeysWithValues: rows.map { ($0.values[slot("name")], $0) })
                try requireEqual(byName.count, 300, "distinct names stored")
                try requireEqual(byName[.string("handled 4")]?.values[slot("seats")], .integer(4), "a set value")
                try requireEqual(byName[.string("handled 5")]?.values[slot("seats")], .null, "an unset value")
                try requireEqual(byName[.string("handled 5")]?.values[slot("wheels")], .integer(4), "a default")
                try requireEqual(byName[.string("handled 7")]?.values[slot("wheels")], .integer(3), "a store value set")
                try requireEqual(
                    try context.count(
                        for: FetchRequest(
                            entityName: "Car", predicate: try FetchPredicate(format: "name BEGINSWITH 'handled '"))),
                    300, "cars fetched")

                let before = try storeRows(fixture)
                let missing = Counter()
                let unnamed = BatchInsertRequest(entityName: "Tag") { (object: ManagedObject) -> Bool in
                    let index = missing.next()
                    guard index < 3 else { return true }
                    if index != 1 { object["name"] = "tag \(index)" }
                    return false
                }
                try requireThrows(
                    "a handler leaving a non-optional attribute nil",
                    matches: { error in
                        guard let error = error as? StoreError else { return false }
                        return error.code == .invalidRequest && error.message.contains("object 1")
                            && error.message.contains("Tag.name")
                    }
                ) { try context.execute(unnamed) }
                let transient = BatchInsertRequest(entityName: "Item") { (object: ManagedObject) -> Bool in
                    object["scratch"] = "x"
                    return false
                }
                try requireThrows(
                    "a handler setting a transient attribute",
                    matches: { ($0 as? StoreError)?.message.contains("Item.scratch") ?? false }
                ) { try context.execute(transient) }
                try require(try storeRows(fixture) == before, "the store is unchanged after the refused handlers")
            },
            ConformanceCase(
                "a batch insert keeps unique constraints by the merge policy: error, object-trump upsert, store-trump skip"
            ) { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let before = try storeRows(fixture)
                let tag = entity("Tag")
                let red = try unwrap(
                    before.values.first {
                        $0.id.entity == tag.entityNumber && $0.values[tag.index(ofProperty: "name")!] == .string("red")
                    }, "the stored red tag")
                var clash = BatchInsertRequest(entityName: "Tag", objects: [["name": "mauve"], ["name": "red"]])
                try requireThrows(
                    "a stored name under the error policy", matches: { ($0 as? StoreError)?.code == .constraint }
                ) { try context.execute(clash) }
                try require(try storeRows(fixture) == before, "the store is unchanged after the conflict")
                let twice = BatchInsertRequest(entityName: "Tag", objects: [["name": "mauve"], ["name": "mauve"]])
                try requireThrows(
                    "one name twice under the error policy", matches: { ($0 as? StoreError)?.code == .constraint }
                ) { try context.execute(twice) }
                try require(try storeRows(fixture) == before, "the store is unchanged after the duplicate")

                context.mergePolicy = .mergeByPropertyStoreTrump
                clash.resultType = .objectIDs
                let kept = try context.execute(clash)
                try requireEqual(kept.objectIDs?.count, 1, "objects stored under store-trump (mauve only)")
                try requireEqual(try fetch(fixture.context(), "Tag").count, 5, "tags after store-trump")
                try requireEqual(
                    try fixture.store.driver.rows(for: [red.id]).first?.version, red.version, "the red row is untouched"
                )

                context.mergePolicy = .mergeByPropertyObjectTrump
                let upsert = BatchInsertRequest(
                    entityName: "Tag", objects: [["name": "red"], ["name": "teal"], ["name": "teal"]])
                var counted = upsert
                counted.resultType = .objectIDs
                let result = try context.execute(counted)
                try requireEqual(
                    result.objectIDs?.count, 2, "objects stored under object-trump (red updated, teal once)")
                try requireEqual(result.changes.updatedObjectIDs.map(\.rowID), [red.id], "the upserted row")
                try requireEqual(
                    try fixture.store.driver.rows(for: [red.id]).first?.version, red.version + 1,
                    "the red row's version after the upsert")
                let tags = names(try fetch(fixture.context(), "Tag")).sorted()
                try requireEqual(
                    tags, ["ÉCLAT", "Green", "blue", "mauve", "red", "teal"].sorted(), "tags after object-trump")
            },
            ConformanceCase("a batch insert with a bad object names it and changes nothing") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let before = try storeRows(fixture)
                let attempts: [(String, BatchInsertRequest, StoreError.Code)] = [
                    (
                        "an unknown entity", BatchInsertRequest(entityName: "Spaceship", objects: [["name": "x"]]),
                        .invalidRequest
                    ),
                    (
                        "an abstract entity", BatchInsertRequest(entityName: "Vehicle", objects: [["name": "x"]]),
                        .invalidRequest
                    ),
                    (
                        "an unknown key",
                        BatchInsertRequest(
                            entityName: "Car", objects: [["name": "ok"], ["name": "x", "colour": "red"]]),
                        .invalidRequest
                    ),
                    (
                        "a string for a number",
                        BatchInsertRequest(entityName: "Car", objects: [["name": "ok"], ["seats": "many"]]),
                        .invalidRequest
                    ),
                    (
                        "an Integer 16 overflow", BatchInsertRequest(entityName: "Car", objects: [["seats": 70_000]]),
                        .invalidRequest
                    ),
                    (
                        "a missing non-optional name",
                        BatchInsertRequest(entityName: "Tag", objects: [["name": "ok"], [:]]), .invalidRequest
                    ),
                    (
                        "a relationship",
                        BatchInsertRequest(entityName: "Tag", objects: [["name": "ok", "items": [Int]()]]),
                        .invalidRequest
                    ),
                    (
                        "a transient attribute", BatchInsertRequest(entityName: "Item", objects: [["scratch": "x"]]),
                        .invalidRequest
                    ),
                ]
                for (what, request, code) in attempts {
                    try requireThrows(
                        what,
                        matches: { error in
                            guard let error = error as? StoreError, error.code == code else { return false }
                            // Errors about one object name it and the entity.
                            return !request.entityName.hasPrefix("S") && request.entityName != "Vehicle"
                                ? error.message.contains(request.entityName) && error.message.contains("object") : true
                        }
                    ) { try context.execute(request) }
                    try require(try storeRows(fixture) == before, "the store is unchanged after \(what)")
                }
            },
        ]
    }
}

/// A counter a `@Sendable` handler can advance.
private final class Counter: @unchecked Sendable {
    // @unchecked Sendable: the handler runs synchronously on the executing thread only.
    private(set) var value = 0
    func next() -> Int {
        defer { value += 1 }
        return value
    }
}

/// `value`, or a ``ConformanceFailure`` naming `what` when it is `nil`.
private func unwrap<T>(_ value: T?, _ what: @autoclosure () -> String, file: String = #fileID, line: Int = #line) throws
    -> T
{
    guard let value else { throw ConformanceFailure(message: "\(what()): missing", file: file, line: line) }
    return value
}
