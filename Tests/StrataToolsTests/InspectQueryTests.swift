import Foundation
import Strata
import StrataInMemory
import StrataTesting
import StrataTools
import Testing

@Suite("strata inspect")
struct InspectTests {
    @Test("the report names driver, UUID, the embedded model and exact per-entity counts")
    func library() throws {
        let store = try seededMemoryStore()
        let report = try StoreInspector.inspect(store)
        #expect(report.driver == "InMemory")
        #expect(report.modelSource == "embedded")
        #expect(report.modelVersionHash == ConformanceModel.model.versionHash.hexString)
        #expect(report.uuid == (try StoreOpener.metadata(at: store))?.uuid)
        let counts = Dictionary(uniqueKeysWithValues: report.entities.map { ($0.name, $0.count) })
        #expect(counts["Employee"] == ConformanceModel.employeeNames.count)
        #expect(counts["Vehicle"] == 0)  // abstract: objects are Cars, SportsCars and Trucks
        #expect(counts["SportsCar"] == 2)
        let json = report.json
        #expect(json["driver"] == .string("InMemory"))
        let entities = try #require(json["entities"]?.arrayValue)
        let car = try #require(entities.first { $0["name"] == .string("Car") })
        #expect(car["parent"] == .string("Vehicle"))
        #expect(car["count"] == .number("2"))
    }

    @Test("a given --model is compared with the store's own model")
    func givenModel() throws {
        let directory = try TemporaryDirectory()
        let store = try seededMemoryStore()
        #expect(
            try StoreInspector.inspect(store, modelPath: try writeConformanceModel(in: directory)).matchesGivenModel
                == true)
        #expect(
            try StoreInspector.inspect(store, modelPath: try writeDemoModel(in: directory)).matchesGivenModel == false)
    }

    @Test("the binary prints the --json shape of the issue for an empty store")
    func binaryJSON() throws {
        let directory = try TemporaryDirectory()
        let result = try runStrata(["inspect", "memory:", "--model", try writeDemoModel(in: directory), "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try parseJSON(result.stdout)
        #expect(json["driver"] == .string("InMemory"))
        #expect(json["uuid"]?.stringValue?.count == 36)
        let names = json["entities"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
        #expect(names == ["Department", "Employee", "Project"])
        #expect(json["entities"]?.arrayValue?.first?["count"] == .number("0"))
        #expect(json["entities"]?.arrayValue?.first?["parent"] == .null)
    }

    @Test("inspect of memory: without a model exits 64 asking for --model")
    func noModel() throws {
        let result = try runStrata(["inspect", "memory:"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--model"))
    }

    @Test("inspect of a missing file exits 64 naming it")
    func missingFile() throws {
        let result = try runStrata(["inspect", "/nonexistent/app.sqlite"])
        #expect(result.status == 64)
        #expect(result.stderr == "strata inspect: no store at '/nonexistent/app.sqlite'\n")
    }
}

@Suite("strata query")
struct QueryTests {
    @Test("a predicate, sort, offset and limit run as a real fetch; relationships print as object URIs")
    func json() throws {
        let store = try seededMemoryStore()
        var options = QueryOptions(entity: "Employee")
        options.predicate = "age >= 30 AND department != nil"
        options.sort = "age:desc,name"
        options.limit = 3
        options.offset = 1
        options.properties = ["name", "age", "department"]
        options.format = .json
        let rows = try #require(parseJSON(try StoreQuery.run(store, options)).arrayValue)
        #expect(rows.count == 3)
        let ages = rows.compactMap { $0["age"].flatMap { if case .number(let n) = $0 { Int(n) } else { nil } } }
        #expect(ages == ages.sorted(by: >))
        #expect(ages.allSatisfy { $0 >= 30 })
        #expect(rows[0]["id"]?.stringValue?.hasPrefix("x-coredata://") == true)
        #expect(rows[0]["entity"] == .string("Employee"))
        #expect(rows[0]["department"]?.stringValue?.contains("/Department/p") == true)
        #expect(rows[0]["email"] == nil)
    }

    @Test("count and csv formats")
    func countAndCSV() throws {
        let store = try seededMemoryStore()
        var options = QueryOptions(entity: "Vehicle")
        options.countOnly = true
        options.format = .json
        #expect(try parseJSON(try StoreQuery.run(store, options)) == .object([("count", .number("5"))]))
        options.countOnly = false
        options.format = .csv
        options.sort = "name"
        options.properties = ["name", "wheels"]
        let lines = try StoreQuery.run(store, options).split(separator: "\n")
        #expect(lines.first == "id,entity,name,wheels")
        #expect(lines.count == 6)
        #expect(lines[1].hasSuffix(",Car,Alpha,4"))
    }

    @Test("a malformed predicate, an unknown entity, property or sort key are usage errors")
    func mistakes() throws {
        let store = try seededMemoryStore()
        var options = QueryOptions(entity: "Employee")
        options.predicate = "age >>> 3"
        #expect { try StoreQuery.run(store, options) } throws: {
            ($0 as? ToolError)?.exitCode == 64 && "\($0)".contains("--where")
        }
        options.predicate = "salary == 'abc' AND nonsense > 1"
        #expect { try StoreQuery.run(store, options) } throws: { ($0 as? ToolError)?.exitCode == 64 }
        options.predicate = nil
        options.sort = "height"
        #expect { try StoreQuery.run(store, options) } throws: { "\($0)".contains("no property 'height'") }
        options.sort = nil
        options.properties = ["shoeSize"]
        #expect { try StoreQuery.run(store, options) } throws: { "\($0)".contains("shoeSize") }
        #expect { try StoreQuery.run(store, QueryOptions(entity: "Nobody")) } throws: {
            "\($0)".contains("no entity 'Nobody'")
        }
    }

    @Test("the binary reports a malformed predicate in one line with exit 64")
    func binaryMalformedPredicate() throws {
        let directory = try TemporaryDirectory()
        let model = try writeDemoModel(in: directory)
        let result = try runStrata(["query", "memory:", "--model", model, "--entity", "Employee", "--where", "age >"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("strata query: --where 'age >'"))
        #expect(result.stdout.isEmpty)
    }

    @Test("the binary prints an empty table and a count for an empty store")
    func binaryEmpty() throws {
        let directory = try TemporaryDirectory()
        let model = try writeDemoModel(in: directory)
        let table = try runStrata([
            "query", "memory:", "--model", model, "--entity", "Employee", "--where", "age > 3", "--sort", "name:desc",
        ])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("(0 objects)"))
        let count = try runStrata([
            "query", "memory:", "--model", model, "--entity", "Employee", "--count", "--format", "json",
        ])
        #expect(count.stdout.contains("\"count\": 0"))
        let badLimit = try runStrata(["query", "memory:", "--entity", "Employee", "--limit", "-1"])
        #expect(badLimit.status == 64)
    }
}
