import Foundation
import Strata

// Batch-faulting results (`fetchBatchFaulting`): the same objects as `fetch(_:)`, in the same
// order, made a batch at a time, uniqued, with pending changes honoured.

extension ConformanceSuite {
    static var batchFaultingCases: [ConformanceCase] {
        [
            ConformanceCase(
                "a batch-faulting fetch holds the objects fetch returns, in its order, for every option and batch size"
            ) { harness in
                let fixture = try Fixture(harness)
                for pending in [false, true] {
                    let context = fixture.context()
                    if pending { try makePendingChanges(context) }
                    for format in [nil, "age > 30", "department.name BEGINSWITH[c] 's' OR email == nil"] {
                        for sort in [[SortKey("name")], [SortKey("age", ascending: false), SortKey("name")], []] {
                            for (offset, limit) in [(0, 0), (0, 4), (3, 0), (2, 5), (20, 3)] {
                                for batch in [0, 1, 3, 5] {
                                    var request = FetchRequest(
                                        entityName: "Employee",
                                        predicate: try format.map { try FetchPredicate(format: $0) }, sortKeys: sort)
                                    request.fetchOffset = offset
                                    request.fetchLimit = limit
                                    request.fetchBatchSize = batch
                                    let what =
                                        "pending \(pending), [\(format ?? "all")], sort \(sort.map(\.keyPath)), offset \(offset), limit \(limit), batch \(batch)"
                                    let array = try context.fetchBatchFaulting(request)
                                    let expected = try reference(context, request)
                                    try requireEqual(array.count, expected.count, "\(what): count")
                                    try requireEqual(
                                        array.fetchBatchSize, batch > 0 ? batch : max(expected.count, 1),
                                        "\(what): batch size")
                                    let walked = Array(array)
                                    let ids = (0..<array.count).map { array.objectID(at: $0) }
                                    try requireEqual(walked.map(\.objectID), ids, "\(what): IDs by position")
                                    if sort.isEmpty && (offset != 0 || limit != 0) {
                                        // Without sort keys a page's members are unspecified.
                                        try requireEqual(Set(ids).count, ids.count, "\(what): no duplicates")
                                    } else if sort.isEmpty {
                                        try requireEqual(Set(ids), Set(expected), "\(what): objects")
                                    } else {
                                        try requireEqual(ids, expected, "\(what): objects in order")
                                    }
                                    // The same objects as fetch(_:) gives in this context (uniquing),
                                    // read back to front and loaded.
                                    let fetched = try context.fetch(request)
                                    if !sort.isEmpty {
                                        for index in array.indices.reversed() {
                                            try require(
                                                array[index] === fetched[index],
                                                "\(what): position \(index) is fetch's object")
                                        }
                                    }
                                    for object in array {
                                        try require(!object.isFault, "\(what): \(object.objectID) loaded when read")
                                    }
                                    try requireEqual(names(walked).count, expected.count, "\(what): values readable")
                                }
                            }
                        }
                    }
                }
            },
            ConformanceCase("a batch-faulting fetch reads IDs only, then makes and loads one batch at a time") {
                harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                var request = FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")])
                request.fetchBatchSize = 5
                let array = try context.fetchBatchFaulting(request)
                try requireEqual(array.count, ConformanceModel.employeeNames.count, "count")
                let employee = try entity("Employee", in: context)
                func registeredEmployees() -> Int { context.registeredObjects.filter { $0.entity === employee }.count }
                try requireEqual(registeredEmployees(), 0, "employees registered by the fetch itself")
                let sixth = array[5]
                try require(!sixth.isFault, "the object read is loaded")
                try requireEqual(registeredEmployees(), 5, "employees registered after reading position 5 (its batch)")
                for index in 5..<10 { try require(!array[index].isFault, "position \(index) of the batch loaded") }
                try requireEqual(registeredEmployees(), 5, "employees registered after reading the rest of the batch")

                var idsOnly = request
                idsOnly.includesPropertyValues = false
                let other = fixture.context()
                let faults = try other.fetchBatchFaulting(idsOnly)
                let first = faults[0]
                try require(first.isFault, "without property values, a read position stays a fault")
                _ = first.value(forKey: "name")
                try require(!faults[4].isFault, "firing one fault loads the faults of its batch")
                try require(faults[5].isFault, "a position of the next batch stays a fault")
            },
            ConformanceCase("objects changed in a walked batch keep their changes and identity when read again") {
                harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                var request = FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")])
                request.fetchBatchSize = 2
                let array = try context.fetchBatchFaulting(request)
                let id = array.objectID(at: 1)
                array[1]["age"] = 99
                for object in array { _ = object.value(forKey: "name") }
                try requireEqual(array[1].objectID, id, "the ID at position 1")
                try requireEqual(array[1].value(forKey: "age") as? Int, 99, "the change at position 1, read again")
                try require(context.updatedObjects.contains(array[1]), "the object is still among the updated objects")
                try context.save()
                let check = try fixture.context().existingObject(with: id)
                try requireEqual(check.value(forKey: "age") as? Int, 99, "the change saved")
            },
            ConformanceCase(
                "a batch-faulting fetch with pending changes holds the inserted object itself, also after a save"
            ) { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                try makePendingChanges(context)
                let aaron = try present(
                    context.insertedObjects.first { $0.value(forKey: "name") as? String == "Aaron" }, "the new employee"
                )
                var request = FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")])
                request.fetchBatchSize = 3
                let array = try context.fetchBatchFaulting(request)
                try requireEqual(array.map(\.objectID), try reference(context, request), "objects with pending changes")
                let position = try present(array.firstIndex { $0 === aaron }, "the new employee's position")
                try require(array.objectID(at: position).isTemporaryID, "the new employee's ID before the save")
                try context.save()
                try require(array[position] === aaron, "the same object after the save")
                try require(!array.objectID(at: position).isTemporaryID, "its permanent ID after the save")

                var ignoring = request
                ignoring.includesPendingChanges = false
                let untouched = try Fixture(harness)
                let stored = untouched.context()
                try makePendingChanges(stored)
                let plain = try stored.fetchBatchFaulting(ignoring)
                try requireEqual(
                    names(Array(plain)).contains("Aaron"), false, "an unsaved insert with includesPendingChanges off")
                try requireEqual(
                    plain.count, ConformanceModel.employeeNames.count, "the stored employees (eve's delete unsaved)")
                try require(
                    Array(plain).contains { $0.value(forKey: "name") as? String == "eve" },
                    "an unsaved delete with includesPendingChanges off")
            },
            ConformanceCase("a batch-faulting fetch of an unknown entity or a bad predicate throws before reading") {
                harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                try requireThrows("an unknown entity", matches: { ($0 as? StoreError)?.code == .invalidRequest }) {
                    _ = try context.fetchBatchFaulting(FetchRequest(entityName: "Spaceship"))
                }
                try requireThrows("a predicate on an unknown key", matches: { $0 is FetchPredicateError }) {
                    _ = try context.fetchBatchFaulting(
                        FetchRequest(entityName: "Employee", predicate: try FetchPredicate(format: "wage > 3")))
                }
            },
        ]
    }

    private static func entity(_ name: String, in context: ManagedObjectContext) throws -> EntityDescription {
        guard let entity = context.coordinator.managedObjectModel.entity(named: name) else {
            throw ConformanceFailure(message: "no entity \(name)", file: #fileID, line: #line)
        }
        return entity
    }

    private static func present<T>(_ value: T?, _ what: String, file: String = #fileID, line: Int = #line) throws -> T {
        guard let value else { throw ConformanceFailure(message: "\(what): missing", file: file, line: line) }
        return value
    }
}
