import Foundation
import Strata

extension ConformanceSuite {
    /// Composite attributes (``CompositeModel``): values, element key paths in predicates and
    /// sort keys, and changes to single elements, on every driver.
    static var compositeCases: [ConformanceCase] {
        [
            ConformanceCase("composite values round-trip: nested elements, absent elements and absent composites") {
                harness in
                let fixture = try CompositeFixture(harness)
                let (_, context) = try fixture.reopen()
                let quakes = try fetchQuakes(context)
                try requireEqual(
                    quakes.map { $0.value(forKey: "code") as? String ?? "?" }, ["a", "b", "c", "d", "e"], "quakes")
                for (object, expected) in zip(quakes, CompositeModel.quakes) {
                    let code = expected.code
                    try requireEqual(
                        object.value(forKey: "magnitude.richter") as? Double, expected.richter, "\(code) richter")
                    try requireEqual(
                        object.value(forKey: "magnitude.depth") as? Float, expected.depth, "\(code) magnitude depth")
                    try requireEqual(
                        object.value(forKey: "location.latitude") as? Double, expected.latitude, "\(code) latitude")
                    try requireEqual(
                        object.value(forKey: "location.place.city") as? String, expected.city, "\(code) city")
                    try requireEqual(
                        object.value(forKey: "location.place.country") as? String, expected.country, "\(code) country")
                    let magnitude = object.value(forKey: "magnitude") as? [String: Any]
                    try require(
                        (magnitude == nil) == (expected.richter == nil), "\(code): magnitude is nil exactly when absent"
                    )
                    try requireEqual(magnitude?["richter"] as? Double, expected.richter, "\(code) magnitude dictionary")
                    let location = object.value(forKey: "location") as? [String: Any]
                    let place = location?["place"] as? [String: Any]
                    try requireEqual(place?["city"] as? String, expected.city, "\(code) nested dictionary")
                    try require(
                        (place == nil) == (expected.city == nil && expected.country == nil),
                        "\(code): place is nil exactly when absent")
                }
                let a = quakes[0]
                try requireEqual(
                    a.value(forKey: "depth") as? Int, 10, "the attribute named like an element keeps its own value")
                try requireEqual(
                    quakes[1].value(forKey: "depth") as? Int, nil, "an element never leaks into the attribute")
            },
            ConformanceCase("predicates on composite element key paths match the in-memory answers") { harness in
                let fixture = try CompositeFixture(harness)
                let context = fixture.context()
                let cases: [(String, String, [String])] = [
                    ("Quake", "magnitude.richter > 4.5", ["a", "c"]),
                    ("Quake", "magnitude.richter >= 4.5 AND magnitude.depth > 5", ["a", "e"]),
                    ("Quake", "magnitude == nil", ["d"]),
                    ("Quake", "magnitude != nil", ["a", "b", "c", "e"]),
                    ("Quake", "location.place.city == 'Lima'", ["b"]),
                    ("Quake", "location.place.city ==[c] 'lima'", ["b", "e"]),
                    ("Quake", "location.place == nil", ["c", "d"]),
                    ("Quake", "location.latitude BETWEEN {0, 40}", ["a", "c", "e"]),
                    ("Quake", "location.longitude < 0 OR depth == 10", ["a", "b"]),
                    ("Quake", "station.location.latitude > 0", ["a", "c"]),
                    ("Quake", "station.location.place.city == 'Oslo'", ["a", "c"]),
                    ("Station", "ANY quakes.magnitude.richter > 7", ["North"]),
                    ("Station", "SUBQUERY(quakes, $q, $q.magnitude.richter < 5).@count == 1", ["South"]),
                    ("Station", "location.place.city == nil", ["South"]),
                ]
                for (entity, format, expected) in cases {
                    let key = entity == "Quake" ? "code" : "name"
                    let request = FetchRequest(
                        entityName: entity, predicate: try FetchPredicate(format: format), sortKeys: [SortKey(key)])
                    try requireEqual(names(try context.fetch(request), key), expected, "\(entity) where \(format)")
                    try requireEqual(
                        try context.count(for: request), expected.count, "count of \(entity) where \(format)")
                    let all = try context.fetch(FetchRequest(entityName: entity, sortKeys: [SortKey(key)]))
                    let evaluated = try all.filter { try request.predicate!.evaluate(with: $0) }
                    try requireEqual(names(evaluated, key), expected, "in memory: \(entity) where \(format)")
                }
            },
            ConformanceCase("sort keys on composite element key paths order fetches as in memory") { harness in
                let fixture = try CompositeFixture(harness)
                let context = fixture.context()
                let all = try fetchQuakes(context)
                let sortings: [[SortKey]] = [
                    [SortKey("magnitude.richter", ascending: false)], [SortKey("location.place.city")],
                    [SortKey("location.place.city", comparison: .caseInsensitive), SortKey("magnitude.depth")],
                    [SortKey("station.location.latitude"), SortKey("location.longitude", ascending: false)],
                ]
                for keys in sortings {
                    let full = keys + [SortKey("code")]
                    let expected = try all.sorted { try SortKey.compare($0, $1, by: full) == .orderedAscending }
                    let actual = try context.fetch(FetchRequest(entityName: "Quake", sortKeys: full))
                    try requireEqual(names(actual, "code"), names(expected, "code"), "order by \(keys.map(\.keyPath))")
                }
                var first = FetchRequest(
                    entityName: "Quake", sortKeys: [SortKey("magnitude.richter", ascending: false)])
                first.fetchLimit = 2
                try requireEqual(names(try context.fetch(first), "code"), ["c", "a"], "the two strongest")
            },
            ConformanceCase("changing one element or clearing a composite reaches the store and leaves the rest") {
                harness in
                let fixture = try CompositeFixture(harness)
                let context = fixture.context()
                let quakes = try fetchQuakes(context)
                quakes[0].setValue(6.4, forKey: "magnitude.richter")
                quakes[1].setValue(nil, forKey: "location")
                try quakes[2].setConvertedValue(["richter": 7.0], forKey: "magnitude")
                try context.save()
                let (_, reopened) = try fixture.reopen()
                let again = try fetchQuakes(reopened)
                try requireEqual(again[0].value(forKey: "magnitude.richter") as? Double, 6.4, "the changed element")
                try requireEqual(again[0].value(forKey: "magnitude.depth") as? Float, 10.5, "its sibling")
                try requireEqual(again[0].value(forKey: "location.place.city") as? String, "Tokyo", "another composite")
                try require(again[1].value(forKey: "location") == nil, "a cleared composite reads nil")
                try requireEqual(
                    again[1].value(forKey: "location.place.city") as? String, nil, "and so do its nested elements")
                try requireEqual(
                    again[1].value(forKey: "magnitude.richter") as? Double, 4.2, "the other composite stays")
                try requireEqual(again[2].value(forKey: "magnitude.richter") as? Double, 7.0, "a replaced composite")
                let found = try reopened.fetch(
                    FetchRequest(
                        entityName: "Quake", predicate: try FetchPredicate(format: "location == nil"),
                        sortKeys: [SortKey("code")]))
                try requireEqual(names(found, "code"), ["b", "d"], "the store answers for the cleared composite")
            },
        ]
    }

    private static func fetchQuakes(_ context: ManagedObjectContext) throws -> [ManagedObject] {
        try context.fetch(FetchRequest(entityName: "Quake", sortKeys: [SortKey("code")]))
    }

    /// A store of ``CompositeModel`` seeded with its quakes and stations.
    struct CompositeFixture {
        let directory: TemporaryDirectory
        let coordinator: PersistentStoreCoordinator
        let store: PersistentStore
        let harness: DriverHarness
        private let keeper = ContextKeeper()

        init(_ harness: DriverHarness) throws {
            directory = try TemporaryDirectory(prefix: "conformance-composite-\(harness.name)")
            (coordinator, store) = try harness.openStack(in: directory, model: CompositeModel.model)
            self.harness = harness
            try CompositeModel.seed(context())
        }

        func context() -> ManagedObjectContext { keeper.keep(ManagedObjectContext(coordinator: coordinator)) }

        func reopen() throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
            try coordinator.remove(store)
            let (again, _) = try harness.openStack(in: directory, model: CompositeModel.model)
            return (again, keeper.keep(ManagedObjectContext(coordinator: again)))
        }
    }
}
