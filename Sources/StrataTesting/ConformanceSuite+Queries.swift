import Foundation
import Strata

extension ConformanceSuite {
    static var queryCases: [ConformanceCase] {
        [
            ConformanceCase("fetching a parent entity includes subentities unless told not to") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                try requireEqual(try context.count(for: FetchRequest(entityName: "Vehicle")), 5, "vehicles")
                try requireEqual(try context.count(for: FetchRequest(entityName: "Car")), 4, "cars and sports cars")
                var exact = FetchRequest(entityName: "Car")
                exact.includesSubentities = false
                try requireEqual(try context.count(for: exact), 2, "plain cars")
                let sports = try fetch(context, "SportsCar", "topSpeed > 250", sort: [SortKey("name")])
                try requireEqual(names(sports), ["Epsilon", "beta"], "sports cars above 250")
                let fourWheels = try fetch(context, "Vehicle", "wheels == 4", sort: [SortKey("name")])
                try requireEqual(names(fourWheels), ["Alpha", "Epsilon", "beta", "delta"], "vehicles with four wheels")
                try requireEqual(
                    fourWheels.map(\.entity.name), ["Car", "SportsCar", "SportsCar", "Car"],
                    "subentity objects have their own entity")
            },
            ConformanceCase("sorts match the in-memory order: several keys, descending, case-insensitive, nil first") {
                harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let sortings: [[SortKey]] = [
                    [SortKey("name")], [SortKey("name", ascending: false)],
                    [SortKey("name", comparison: .caseInsensitive)],
                    [SortKey("age"), SortKey("name", ascending: false)],
                    [SortKey("salary"), SortKey("name")], [SortKey("department.name"), SortKey("name")],
                    [SortKey("email", ascending: false), SortKey("name")],
                ]
                let all = try fetch(context, "Employee")
                for keys in sortings {
                    let expected = try all.sorted {
                        try SortKey.compare($0, $1, by: keys + [SortKey("name")]) == .orderedAscending
                    }
                    let actual = try context.fetch(
                        FetchRequest(entityName: "Employee", sortKeys: keys + [SortKey("name")]))
                    try requireEqual(names(actual), names(expected), "order by \(keys.map(\.keyPath))")
                }
                let byEmail = try context.fetch(
                    FetchRequest(entityName: "Employee", sortKeys: [SortKey("email"), SortKey("name")]))
                try require(byEmail.first?.value(forKey: "email") == nil, "nil sorts first ascending")
            },
            ConformanceCase("paging with offset and limit returns the right slice") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let all = names(try fetch(context, "Employee", sort: [SortKey("name")]))
                for (offset, limit) in [(0, 5), (5, 5), (10, 5), (3, 0), (20, 2)] {
                    var request = FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")])
                    request.fetchOffset = offset
                    request.fetchLimit = limit
                    let expected = Array(all.dropFirst(offset).prefix(limit == 0 ? Int.max : limit))
                    try requireEqual(names(try context.fetch(request)), expected, "offset \(offset) limit \(limit)")
                }
            },
            ConformanceCase("counts, ID fetches and dictionary results agree with object fetches") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let predicate = try FetchPredicate(format: "age >= 30 AND email != nil")
                let request = FetchRequest(entityName: "Employee", predicate: predicate, sortKeys: [SortKey("name")])
                let objects = try context.fetch(request)
                try requireEqual(try context.count(for: request), objects.count, "count")
                try requireEqual(try context.fetchObjectIDs(request), objects.map(\.objectID), "IDs")
                var dictionaries = request
                dictionaries.propertiesToFetch = ["name", "age"]
                let rows = try context.fetchDictionaries(dictionaries)
                try requireEqual(rows.map { $0["name"] as? String ?? "" }, names(objects), "dictionary names")
            },
            ConformanceCase("unsaved inserts, updates and deletes are reflected in fetches") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let newcomer = try context.insertNewObject(forEntityName: "Employee")
                newcomer["name"] = "Aaron"
                newcomer["age"] = 41
                let bob = try fetch(context, "Employee", "name == 'bob'")[0]
                bob["age"] = 70
                let eve = try fetch(context, "Employee", "name == 'eve'")[0]
                context.delete(eve)
                var request = FetchRequest(
                    entityName: "Employee", predicate: try FetchPredicate(format: "age > 40"),
                    sortKeys: [SortKey("name")])
                let pending = names(try context.fetch(request))
                try require(pending.contains("Aaron"), "unsaved insert matches")
                try require(pending.contains("bob"), "unsaved update matches")
                try require(!pending.contains("eve"), "unsaved delete is gone")
                request.includesPendingChanges = false
                let stored = names(try context.fetch(request))
                try require(!stored.contains("Aaron"), "store does not know the insert")
                request.includesPendingChanges = true
                request.fetchLimit = 1
                try requireEqual(names(try context.fetch(request)), ["Aaron"], "limit applies after pending changes")
            },
        ]
    }
}
