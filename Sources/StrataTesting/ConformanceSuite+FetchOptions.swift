import Foundation
import Strata

// Every fetch option, checked against an answer computed independently of the fetch path: the
// context's objects (the store's rows as the context sees them, minus its deletes, plus its
// inserts), filtered with the in-memory evaluator, sorted with `SortKey.compare` (ties by row ID,
// as fetches break them) and paged by hand.

extension ConformanceSuite {
    static var fetchOptionCases: [ConformanceCase] {
        [
            ConformanceCase(
                "offset, limit and batch size with sorts and pending changes give exactly the reference answer"
            ) { harness in
                let fixture = try Fixture(harness)
                for pending in [false, true] {
                    let context = fixture.context()
                    if pending { try makePendingChanges(context) }
                    for format in [nil, "age > 30", "department.name BEGINSWITH[c] 's' OR email == nil"] {
                        for sort in [
                            [SortKey("name")], [SortKey("age", ascending: false), SortKey("name")],
                            [SortKey("department.name"), SortKey("name")], [],
                        ] {
                            for (offset, limit) in [(0, 0), (0, 4), (3, 0), (3, 4), (20, 3)] {
                                for batch in [0, 3] {
                                    var request = FetchRequest(
                                        entityName: "Employee",
                                        predicate: try format.map { try FetchPredicate(format: $0) }, sortKeys: sort)
                                    request.fetchOffset = offset
                                    request.fetchLimit = limit
                                    request.fetchBatchSize = batch
                                    let what =
                                        "pending \(pending), [\(format ?? "all")], sort \(sort.map(\.keyPath)), offset \(offset), limit \(limit), batch \(batch)"
                                    let expected = try reference(context, request)
                                    let objects = try context.fetch(request)
                                    if sort.isEmpty {
                                        // Without sort keys the order is unspecified: compare as sets.
                                        try requireEqual(
                                            Set(objects.map(\.objectID)).count, objects.count, "\(what): no duplicates")
                                        if offset == 0 && limit == 0 {
                                            try requireEqual(
                                                Set(objects.map(\.objectID)), Set(expected), "\(what): objects")
                                        } else {
                                            try requireEqual(objects.count, expected.count, "\(what): page size")
                                        }
                                    } else {
                                        try requireEqual(objects.map(\.objectID), expected, "\(what): objects")
                                        try requireEqual(try context.fetchObjectIDs(request), expected, "\(what): IDs")
                                    }
                                    try requireEqual(try context.count(for: request), expected.count, "\(what): count")
                                    try requireEqual(names(objects).count, expected.count, "\(what): values readable")
                                }
                            }
                        }
                    }
                }
            },
            ConformanceCase("includesSubentities with sorts, pages and pending subentity inserts") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                for pending in [false, true] {
                    if pending {
                        let car = try context.insertNewObject(forEntityName: "Car")
                        car["name"] = "Bravo"
                        car["seats"] = 5
                        let sports = try context.insertNewObject(forEntityName: "SportsCar")
                        sports["name"] = "Aardvark"
                        sports["topSpeed"] = 300.0
                    }
                    for entity in ["Vehicle", "Car", "SportsCar", "Truck"] {
                        for includes in [true, false] {
                            for (offset, limit) in [(0, 0), (1, 2)] {
                                var request = FetchRequest(
                                    entityName: entity, sortKeys: [SortKey("name", comparison: .caseInsensitive)])
                                request.includesSubentities = includes
                                request.fetchOffset = offset
                                request.fetchLimit = limit
                                let what =
                                    "pending \(pending), \(entity), subentities \(includes), offset \(offset), limit \(limit)"
                                let expected = try reference(context, request)
                                try requireEqual(try context.fetch(request).map(\.objectID), expected, what)
                                try requireEqual(try context.count(for: request), expected.count, "\(what): count")
                                if !includes {
                                    try require(
                                        try context.fetch(request).allSatisfy { $0.entity.name == entity },
                                        "\(what): only \(entity) objects")
                                }
                            }
                        }
                    }
                }
            },
            ConformanceCase("includesPendingChanges false answers from the stores alone, for every result type") {
                harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                try makePendingChanges(context)
                var request = FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")])
                request.includesPendingChanges = false
                let stored = names(try fetch(fixture.context(), "Employee", sort: [SortKey("name")]))
                let objects = try context.fetch(request)
                try requireEqual(objects.count, stored.count, "objects")
                try requireEqual(try context.count(for: request), stored.count, "count")
                try requireEqual(try context.fetchObjectIDs(request).count, stored.count, "IDs")
                request.propertiesToFetch = ["name"]
                try requireEqual(
                    try context.fetchDictionaries(request).compactMap { $0["name"] as? String }, stored, "dictionaries")
                try require(!objects.contains { $0.isInserted }, "no unsaved insert")
            },
            ConformanceCase(
                "includesPropertyValues false returns faults that load the right values; the same objects as with values"
            ) { harness in
                let fixture = try Fixture(harness)
                for pending in [false, true] {
                    let context = fixture.context()
                    if pending { try makePendingChanges(context) }
                    var request = FetchRequest(
                        entityName: "Employee", predicate: try FetchPredicate(format: "age > 25"),
                        sortKeys: [SortKey("name")])
                    // Without pending changes the reference is computed elsewhere, so nothing is loaded here first.
                    let expected = try reference(pending ? context : fixture.context(), request)
                    request.includesPropertyValues = false
                    let objects = try context.fetch(request)
                    try requireEqual(objects.map(\.objectID), expected, "pending \(pending): objects")
                    if !pending {
                        try require(objects.allSatisfy(\.isFault), "objects fetched without property values are faults")
                    }
                    let fresh = fixture.context()
                    for object in objects where !object.isInserted && !object.hasChanges {
                        let loaded = try fresh.existingObject(with: object.objectID)
                        try requireEqual(
                            object.value(forKey: "name") as? String, loaded.value(forKey: "name") as? String,
                            "name of \(object.objectID)")
                        try requireEqual(
                            object.value(forKey: "age") as? Int, loaded.value(forKey: "age") as? Int,
                            "age of \(object.objectID)")
                    }
                }
            },
            ConformanceCase(
                "shouldRefreshRefetchedObjects brings loaded objects up to date and keeps their unsaved changes"
            ) { harness in
                let fixture = try Fixture(harness)
                let mine = fixture.context()
                let bob = try fetch(mine, "Employee", "name == 'bob'")[0]
                let ann = try fetch(mine, "Employee", "name == 'Ann'")[0]
                let bobAge = bob.value(forKey: "age") as? Int ?? 0
                _ = ann.value(forKey: "age")
                ann["email"] = "ann@mine.example"
                let theirs = fixture.context()
                for name in ["bob", "Ann"] {
                    let other = try fetch(theirs, "Employee", "name == '\(name)'")[0]
                    other["age"] = 66
                    other["salary"] = 12_345.0
                }
                try theirs.save()
                let request = FetchRequest(
                    entityName: "Employee", predicate: try FetchPredicate(format: "name IN {'bob', 'Ann'}"))
                _ = try mine.fetch(request)
                try requireEqual(
                    bob.value(forKey: "age") as? Int, bobAge, "a loaded object keeps its values by default")
                var refreshing = request
                refreshing.shouldRefreshRefetchedObjects = true
                let again = try mine.fetch(refreshing)
                try require(again.contains(bob) && again.contains(ann), "the same objects come back")
                try requireEqual(bob.value(forKey: "age") as? Int, 66, "refetched age")
                try requireEqual(bob.value(forKey: "salary") as? Double, 12_345.0, "refetched salary")
                try requireEqual(ann.value(forKey: "age") as? Int, 66, "refetched age under an unsaved change")
                try requireEqual(ann.value(forKey: "email") as? String, "ann@mine.example", "the unsaved change stays")
                try require(ann.isUpdated && !bob.hasChanges, "change tracking after the refresh")
                try mine.save()
                let check = try fetch(fixture.context(), "Employee", "name == 'Ann'")[0]
                try requireEqual(check.value(forKey: "age") as? Int, 66, "saved age")
                try requireEqual(check.value(forKey: "email") as? String, "ann@mine.example", "saved email")
            },
            ConformanceCase("relationshipKeyPathsForPrefetching several levels deep loads everything a walk reads") {
                harness in
                let fixture = try Fixture(harness.recording)
                let driver = try recordingDriver(fixture.store)
                // Roots only, so the objects a walk reaches are not registered by the fetch itself.
                let cases: [(entity: String, format: String, paths: [String], walk: (ManagedObject) -> [String])] = [
                    (
                        "Department", "TRUEPREDICATE", ["employees.mentees", "manager.department"],
                        { department in
                            department.objects(forKey: "employees").flatMap { employee in
                                names(employee.objects(forKey: "mentees")) + names([employee])
                            }
                                + names(
                                    [department.object(forKey: "manager")?.object(forKey: "department")].compactMap {
                                        $0
                                    })
                        }
                    ),
                    (
                        "Node", "parent == nil", ["children.children"],
                        { node in
                            node.objects(forKey: "children").flatMap { child in
                                names(child.objects(forKey: "children"), "label")
                            }
                        }
                    ),
                    (
                        "Employee", "age > 40", ["mentor.mentor", "department.employees"],
                        { employee in
                            names([employee.object(forKey: "mentor")?.object(forKey: "mentor")].compactMap { $0 })
                                + names(employee.object(forKey: "department")?.objects(forKey: "employees") ?? [])
                        }
                    ),
                ]
                for (entity, format, paths, walk) in cases {
                    var answers: [[String]] = []
                    for prefetching in [false, true] {
                        // An empty row cache, so only prefetching can spare the walk its store calls.
                        fixture.coordinator.rowCache.removeAll(in: ObjectIdentifier(fixture.store))
                        let context = fixture.context()
                        var request = FetchRequest(
                            entityName: entity, predicate: try FetchPredicate(format: format),
                            sortKeys: [SortKey(entity == "Node" ? "label" : "name")])
                        if prefetching { request.relationshipKeyPathsForPrefetching = paths }
                        let objects = try context.fetch(request)
                        driver.clearCalls()
                        answers.append(objects.flatMap { walk($0).sorted() })
                        let reads = driver.calls.filter { [.fetch, .rows, .relatedRows].contains($0.operation) }
                        if prefetching {
                            try require(
                                reads.isEmpty, "\(entity) prefetching \(paths): the walk called the store: \(reads)")
                        } else {
                            try require(
                                !reads.isEmpty,
                                "\(entity) without prefetching: the walk should need the store (the test would prove nothing)"
                            )
                        }
                    }
                    try requireEqual(
                        answers[1], answers[0], "\(entity): the walk reads the same with and without prefetching")
                }
            },
        ]
    }

    /// Unsaved changes touching Employee: an insert, an update moving an object across the
    /// predicates and sorts used above, and a delete.
    static func makePendingChanges(_ context: ManagedObjectContext) throws {
        let newcomer = try context.insertNewObject(forEntityName: "Employee")
        newcomer["name"] = "Aaron"
        newcomer["age"] = 41
        let bob = try fetch(context, "Employee", "name == 'bob'")[0]
        bob["age"] = 70
        bob["name"] = "zed"
        let eve = try fetch(context, "Employee", "name == 'eve'")[0]
        context.delete(eve)
    }

    /// The IDs a request must return, computed without the fetch path's merging and paging.
    static func reference(_ context: ManagedObjectContext, _ request: FetchRequest) throws -> [ManagedObjectID] {
        var stored = FetchRequest(entityName: request.entityName)
        stored.includesPendingChanges = false
        stored.includesSubentities = request.includesSubentities
        let deleted = context.deletedObjects
        var objects = try context.fetch(stored).filter { !deleted.contains($0) }
        if request.includesPendingChanges {
            let entity = try entityDescription(request.entityName, in: context)
            objects += context.insertedObjects.filter {
                request.includesSubentities ? $0.entity.isKind(of: entity) : $0.entity === entity
            }
        }
        if let predicate = request.predicate { objects = try objects.filter { try predicate.evaluate(with: $0) } }
        var failure: (any Error)?
        objects.sort { a, b in
            do {
                switch try SortKey.compare(a, b, by: request.sortKeys) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: return a.objectID.rowID < b.objectID.rowID
                }
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return Array(
            objects.dropFirst(request.fetchOffset).prefix(request.fetchLimit > 0 ? request.fetchLimit : Int.max)
        ).map(\.objectID)
    }

    private static func entityDescription(_ name: String, in context: ManagedObjectContext) throws -> EntityDescription
    {
        guard let entity = context.coordinator.managedObjectModel.entity(named: name) else {
            throw ConformanceFailure(message: "no entity \(name)", file: #fileID, line: #line)
        }
        return entity
    }
}
