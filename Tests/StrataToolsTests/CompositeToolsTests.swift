import Foundation
import Strata
import StrataTesting
import StrataTools
import Testing

/// Creates a store at `location` (any driver) holding ``CompositeModel``'s seed, and closes it.
@discardableResult
private func seededCompositeStore(_ location: StoreLocation = memoryLocation("quakes")) throws -> StoreLocation {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: CompositeModel.model)
    let store = try coordinator.addPersistentStore(type: try location.storeType(), at: location.url)
    try CompositeModel.seed(ManagedObjectContext(coordinator: coordinator))
    try coordinator.remove(store)
    return location
}

private func export(_ store: StoreLocation) throws -> JSONValue {
    var text = ""
    try InterchangeExporter.export(from: store) { text += $0 }
    return try parseJSON(text)
}

private func quakes(_ document: JSONValue) -> [String: JSONValue] {
    var result: [String: JSONValue] = [:]
    for object in document["objects"]?.arrayValue ?? [] where object["entity"] == .string("Quake") {
        if let code = object["attributes"]?["code"]?.stringValue { result[code] = object["attributes"] }
    }
    return result
}

private let allSchemes: [KnownDriver] = [.memory] + KnownDriver.fileBacked
private let allPairs = allSchemes.flatMap { a in allSchemes.map { (a, $0) } }

@Suite("Composite attributes in the tools")
struct CompositeToolsTests {
    @Test("export writes a composite as an object of its elements, nested, and null when absent")
    func exportForm() throws {
        let exported = quakes(try export(try seededCompositeStore()))
        let a = try #require(exported["a"])
        #expect(a["magnitude"]?.serialized(pretty: false) == #"{"richter":6.1,"depth":10.5}"#)
        #expect(
            a["location"]?.serialized(pretty: false)
                == #"{"latitude":35.6,"longitude":139.7,"place":{"city":"Tokyo","country":"JP"}}"#)
        #expect(a["depth"] == .number("10"))
        #expect(exported["c"]?["location"]?["place"] == .null, "an absent nested composite is null")
        #expect(exported["d"]?["magnitude"] == .null && exported["d"]?["location"] == .null)
        #expect(a.objectValue?.contains { $0.0.contains(".") } == false, "no element key paths at the top level")
    }

    @Test("export then import reproduces every composite; element rules apply only to present composites")
    func importRoundTrip() throws {
        let a = try seededCompositeStore()
        var text = ""
        try InterchangeExporter.export(from: a) { text += $0 }
        let directory = try TemporaryDirectory()
        let modelPath = directory.file("Quakes.json")
        try CompositeModel.model.encodedRepresentation().write(to: modelPath)
        let b = memoryLocation("imported")
        let summary = try InterchangeImporter.importData(
            Data(text.utf8), fileName: "q.json", into: b, modelPath: modelPath.path)
        #expect(summary.total == 7)
        #expect(quakes(try export(a)) == quakes(try export(b)))
    }

    @Test("bad composite values are problems at their JSON path")
    func importProblems() throws {
        let bad = """
            {"format": "strata-json", "version": 1, "objects": [
              {"entity": "Quake", "id": "q1", "attributes": {"code": "x", "magnitude": {"richter": 1, "scale": "ML"}}},
              {"entity": "Quake", "id": "q2", "attributes": {"code": "y", "magnitude": 4.5}},
              {"entity": "Quake", "id": "q3", "attributes": {"code": "z", "location": {"place": {"city": 7}}}},
              {"entity": "Quake", "id": "q4", "attributes": {"code": "w", "magnitude": {"depth": 3}}},
              {"entity": "Quake", "id": "q5", "attributes": {"code": "v", "magnitude": null, "location.latitude": 2}}
            ]}
            """
        let problems = InterchangeImporter.problems(in: Data(bad.utf8), model: CompositeModel.model).map(\.description)
        let expected = [
            "$.objects[0].attributes.magnitude.scale: composite 'magnitude' has no element 'scale'",
            "$.objects[1].attributes.magnitude: 'magnitude' is a composite attribute: expected an object",
            "$.objects[2].attributes.location.place.city: expected a string",
            "$.objects[3].attributes.magnitude.richter: 'magnitude.richter' is required",
        ]
        for prefix in expected {
            #expect(problems.contains { $0.hasPrefix(prefix) }, "missing: \(prefix) in \(problems)")
        }
        #expect(problems.count == expected.count, "\(problems)")
    }

    @Test("convert A → B → A keeps every composite on every pair of drivers", arguments: allPairs)
    func convertRoundTrip(_ pair: (KnownDriver, KnownDriver)) throws {
        let directory = try TemporaryDirectory()
        func location(_ scheme: KnownDriver, _ name: String) -> StoreLocation {
            scheme == .memory ? memoryLocation(name) : fileLocation(scheme, name, in: directory)
        }
        let a = try seededCompositeStore(location(pair.0, "a"))
        let b = location(pair.1, "b")
        let back = location(pair.0, "back")
        #expect(try StoreConverter.convert(from: a, to: b).isVerified)
        #expect(try StoreConverter.convert(from: b, to: back).isVerified)
        #expect(try digests(a, model: CompositeModel.model) == digests(back, model: CompositeModel.model))
        #expect(quakes(try export(b)) == quakes(try export(a)))
    }

    @Test("the binary converts a composite store with its embedded model, and validate finds nothing wrong")
    func binary() throws {
        let directory = try TemporaryDirectory()
        let a = try seededCompositeStore(fileLocation(.sqlite, "a", in: directory))
        let b = fileLocation(.lmdb, "b", in: directory)
        let converted = try runStrata(["convert", a.description, b.description, "--quiet"])
        #expect(converted.status == 0, "\(converted.stderr)")
        let query = try runStrata([
            "query", b.description, "--entity", "Quake", "--where", "magnitude.richter > 6", "--sort", "code",
        ])
        #expect(query.status == 0, "\(query.stderr)")
        #expect(
            query.stdout.contains("6.1") && query.stdout.contains("7.3") && !query.stdout.contains("4.2"),
            "\(query.stdout)")
        #expect(try StoreValidator.validate(b).isEmpty)
        let shown = try runStrata(["model", "show", b.description])
        #expect(
            shown.stdout.contains("  magnitude: Composite Magnitude (optional)\n    richter: Double (required)"),
            "\(shown.stdout)")
    }

    @Test("query sorts by element key paths and prints a composite as an object, its elements as columns")
    func query() throws {
        let store = try seededCompositeStore()
        var options = QueryOptions(entity: "Quake")
        options.sort = "magnitude.richter:desc,code"
        options.properties = ["code", "magnitude", "location.place"]
        options.format = .json
        let rows = try #require(try parseJSON(try StoreQuery.run(store, options)).arrayValue)
        #expect(rows.map { $0["code"]?.stringValue } == ["c", "a", "e", "b", "d"])
        #expect(rows[1]["magnitude"]?.serialized(pretty: false) == #"{"richter":6.1,"depth":10.5}"#)
        #expect(rows[1]["location.place"]?.serialized(pretty: false) == #"{"city":"Tokyo","country":"JP"}"#)
        #expect(rows[4]["magnitude"] == .null)
        var table = QueryOptions(entity: "Quake")
        table.predicate = "location.place.city ==[c] 'lima'"
        table.sort = "code"
        let text = try StoreQuery.run(store, table)
        #expect(text.contains("location.place.city") && text.contains("(2 objects)"), "\(text)")
        table.sort = "location.nope"
        #expect { try StoreQuery.run(store, table) } throws: {
            "\($0)".contains("is a composite attribute; sort by one of its elements")
        }
    }

    @Test("model show --json lists elements; model diff reports changed elements")
    func modelTools() throws {
        let quake = try #require(
            ModelDescription.json(CompositeModel.model)["entities"]?.arrayValue?.first {
                $0["name"] == .string("Quake")
            })
        let location = try #require(quake["attributes"]?.arrayValue?.first { $0["name"] == .string("location") })
        #expect(location["type"] == .string("Composite") && location["composite"] == .string("Location"))
        #expect(
            location["elements"]?.arrayValue?.map { $0["name"]?.stringValue } == ["latitude", "longitude", "place"])
        #expect(location["elements"]?.arrayValue?.last?["elements"]?.arrayValue?.count == 2)
        var changed = CompositeModel.location
        changed.elements[0] = AttributeDescription("latitude", .float)
        let other = try ManagedObjectModel(entities: [
            EntityDescription(
                "Station", properties: [.attribute("name", .string, isOptional: false), .attribute(changed)])
        ])
        let before = try ManagedObjectModel(entities: [
            EntityDescription(
                "Station",
                properties: [.attribute("name", .string, isOptional: false), .attribute(CompositeModel.location)])
        ])
        let diff = ModelDiff(old: before, new: other)
        #expect(
            diff.changes.map(\.description).contains {
                $0.contains("Station.location") && $0.contains("composite elements")
            }, "\(diff.lines)")
        #expect(diff.needsMigration)
    }
}
