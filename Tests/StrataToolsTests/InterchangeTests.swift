import Foundation
import Strata
import StrataInMemory
import StrataTesting
import StrataTools
import Testing

private func export(_ store: StoreLocation, entities: [String] = []) throws -> String {
    var text = ""
    try InterchangeExporter.export(from: store, entities: entities) { text += $0 }
    return text
}

private let people = """
    {"format": "strata-json", "version": 1, "objects": [
      {"entity": "Department", "id": "d1", "attributes": {"name": "Research"}},
      {"entity": "Employee", "id": "p1", "attributes": {"name": "Ann", "age": 34, "email": "ann@example.com"},
       "relationships": {"department": "d1"}},
      {"entity": "Employee", "id": "p2", "attributes": {"name": "Bob", "age": 41, "email": null},
       "relationships": {"department": "d1", "projects": ["x"]}},
      {"entity": "Project", "id": "x", "attributes": {"title": "Compiler"}}
    ]}
    """

@Suite("JSON interchange: export and import")
struct InterchangeTests {
    @Test("export then import into a new store reproduces every object and relationship")
    func roundTrip() throws {
        let a = try seededMemoryStore()
        let text = try export(a)
        let json = try parseJSON(text)
        #expect(json["format"] == .string("strata-json"))
        #expect(json["version"] == .number("1"))
        let b = memoryLocation("imported")
        let directory = try TemporaryDirectory()
        let summary = try InterchangeImporter.importData(
            Data(text.utf8), fileName: "a.json", into: b, modelPath: try writeConformanceModel(in: directory))
        #expect(summary.total == json["objects"]?.arrayValue?.count)
        // Keys differ after import; compare the re-exported content without ids.
        func content(_ store: StoreLocation) throws -> [String] {
            let objects = try parseJSON(try export(store))["objects"]?.arrayValue ?? []
            return objects.map { object in
                "\(object["entity"]!.serialized(pretty: false)) \(object["attributes"]!.serialized(pretty: false))"
            }.sorted()
        }
        #expect(try content(a) == content(b))
        var options = QueryOptions(entity: "Playlist")
        options.format = .json
        options.properties = ["tracks"]
        let tracks = try parseJSON(try StoreQuery.run(b, options)).arrayValue?.first?["tracks"]?.arrayValue
        #expect(tracks?.count == 4)
    }

    @Test("values use the documented forms: ISO 8601 dates with fractions, decimals as strings, base64")
    func valueForms() throws {
        let text = try export(try seededMemoryStore(), entities: ["Item", "Tag"])
        let items = try #require(parseJSON(text)["objects"]?.arrayValue)
        let item = try #require(items.first { $0["attributes"]?["int16"] == .number("-7") })
        #expect(item["attributes"]?["decimal"] == .string("1.25"))
        #expect(item["attributes"]?["date"]?.stringValue?.hasSuffix("Z") == true)
        #expect(item["attributes"]?["date"]?.stringValue?.contains(".") == true)
        #expect(item["attributes"]?["binary"] == .string("AA=="))
        #expect(item["attributes"]?["uuid"] == .string("00000000-0000-0000-0000-000000000001"))
        #expect(item["relationships"]?["tags"]?.arrayValue != nil)
        #expect(items.allSatisfy { $0["entity"] == .string("Item") || $0["entity"] == .string("Tag") })
        let alone = try #require(
            parseJSON(try export(try seededMemoryStore(), entities: ["Item"]))["objects"]?.arrayValue)
        #expect(alone.allSatisfy { $0["relationships"]?["tags"] == nil })
    }

    @Test("one side of a relationship is enough: the inverse is derived")
    func inverseDerived() throws {
        let directory = try TemporaryDirectory()
        let store = memoryLocation("people")
        let summary = try InterchangeImporter.importData(
            Data(people.utf8), fileName: "people.json", into: store, modelPath: try writeDemoModel(in: directory))
        #expect(summary.total == 4)
        var options = QueryOptions(entity: "Department")
        options.format = .json
        let department = try #require(parseJSON(try StoreQuery.run(store, options)).arrayValue?.first)
        #expect(department["employees"]?.arrayValue?.count == 2)
        options = QueryOptions(entity: "Project")
        options.format = .json
        #expect(try parseJSON(try StoreQuery.run(store, options)).arrayValue?.first?["members"]?.arrayValue?.count == 1)
    }

    @Test("every problem is reported with its JSON path and nothing is written")
    func problems() throws {
        let bad = """
            {"format": "strata-json", "version": 1, "objects": [
              {"entity": "Employee", "id": "p1", "attributes": {"name": "Ann", "age": "old", "height": 3}},
              {"entity": "Employee", "id": "p1", "attributes": {"name": "Dup", "age": 30}},
              {"entity": "Employee", "id": "p3", "attributes": {"age": 12, "email": "nope"}, "relationships": {"department": "d9"}},
              {"entity": "Robot", "id": "r1"},
              {"entity": "Department", "id": "d1", "attributes": {"name": "R"}, "relationships": {"employees": "p3"}}
            ]}
            """
        let model = try Demo.makeModel()
        let problems = InterchangeImporter.problems(in: Data(bad.utf8), model: model).map(\.description)
        let expected = [
            "$.objects[0].attributes.age: expected an integer",
            "$.objects[0].attributes.height: entity 'Employee' has no attribute 'height'",
            "$.objects[1].id: id 'p1' is already used by $.objects[0]",
            "$.objects[2].relationships.department: no object in the file has id 'd9'",
            "$.objects[2].attributes.name: 'name' is required",
            "$.objects[2].attributes.age: 'age' is 12, below the minimum 16",
            "$.objects[2].attributes.email",
            "$.objects[3].entity: the model has no entity 'Robot'",
            "$.objects[4].relationships.employees: 'employees' is to-many",
        ]
        for prefix in expected {
            #expect(problems.contains { $0.hasPrefix(prefix) }, "missing: \(prefix) in \(problems)")
        }
        let directory = try TemporaryDirectory()
        let store = memoryLocation("refused")
        #expect {
            try InterchangeImporter.importData(
                Data(bad.utf8), fileName: "bad.json", into: store, modelPath: try writeDemoModel(in: directory))
        } throws: { ($0 as? ToolError)?.exitCode == 1 && "\($0)".contains("nothing imported") }
        #expect(!store.exists)
    }

    @Test("both sides given must agree")
    func inverseDisagreement() throws {
        let text = """
            {"format": "strata-json", "version": 1, "objects": [
              {"entity": "Department", "id": "d1", "attributes": {"name": "A"}, "relationships": {"employees": ["p1"]}},
              {"entity": "Department", "id": "d2", "attributes": {"name": "B"}},
              {"entity": "Employee", "id": "p1", "attributes": {"name": "Ann", "age": 30}, "relationships": {"department": "d2"}}
            ]}
            """
        let problems = InterchangeImporter.problems(in: Data(text.utf8), model: try Demo.makeModel())
        #expect(
            problems.contains {
                $0.path == "$.objects[0].relationships.employees" && $0.message.contains("does not point back")
            })
    }

    @Test("bad JSON exits 1 naming the line and column; a missing file exits 64")
    func binaryBadJSON() throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("broken.json")
        try Data("{\"format\": \"strata-json\",\n  \"objects\": [1,]}".utf8).write(to: file)
        let model = try writeDemoModel(in: directory)
        let result = try runStrata(["import", file.path, "--to", "memory:", "--model", model])
        #expect(result.status == 1)
        #expect(result.stderr.contains("line 2, column"))
        #expect(result.stdout.isEmpty)
        let missing = try runStrata(["import", directory.file("none.json").path, "--to", "memory:", "--model", model])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("none.json"))
    }

    @Test("the binary imports a good file into memory: and lists invalid objects with paths otherwise")
    func binaryImport() throws {
        let directory = try TemporaryDirectory()
        let model = try writeDemoModel(in: directory)
        let good = directory.file("people.json")
        try Data(people.utf8).write(to: good)
        let result = try runStrata(["import", good.path, "--to", "memory:", "--model", model])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Imported 4 objects into memory: (Department 1, Employee 2, Project 1)."))
        let bad = directory.file("bad.json")
        try Data(
            #"{"format": "strata-json", "version": 1, "objects": [{"entity": "Employee", "id": "e", "attributes": {"age": 3}}]}"#
                .utf8
        ).write(to: bad)
        let refused = try runStrata(["import", bad.path, "--to", "memory:", "--model", model])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("$.objects[0].attributes.name: 'name' is required"))
        #expect(refused.stderr.contains("$.objects[0].attributes.age"))
        let noModel = try runStrata(["import", good.path, "--to", "memory:"])
        #expect(noModel.status == 64)
        #expect(noModel.stderr.contains("--model"))
    }

    @Test("export of an empty store and of an unknown entity")
    func binaryExport() throws {
        let directory = try TemporaryDirectory()
        let model = try writeDemoModel(in: directory)
        let result = try runStrata(["export", "memory:", "--model", model])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try parseJSON(result.stdout)["objects"] == .array([]))
        let output = directory.file("out.json")
        let written = try runStrata(["export", "memory:", "--model", model, "--output", output.path])
        #expect(written.status == 0)
        #expect(FileManager.default.fileExists(atPath: output.path))
        let unknown = try runStrata(["export", "memory:", "--model", model, "--entity", "Robot"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("no entity 'Robot'"))
    }

    @Test("export → import → export across processes keeps every object", arguments: KnownDriver.fileBacked)
    func fileRoundTrip(_ scheme: KnownDriver) throws {
        let directory = try TemporaryDirectory()
        let a = fileLocation(scheme, "a", in: directory)
        try seededMemoryStore(a)
        let json = directory.file("a.json")
        #expect(try runStrata(["export", a.description, "--output", json.path]).status == 0)
        let b = fileLocation(scheme, "b", in: directory)
        let imported = try runStrata([
            "import", json.path, "--to", b.description, "--model", try writeConformanceModel(in: directory),
        ])
        #expect(imported.status == 0, "\(imported.stderr)")
        let counts = { (store: StoreLocation) in try StoreInspector.inspect(store).entities.map(\.count) }
        #expect(try counts(a) == counts(b))
        #expect(try runStrata(["validate", b.description]).status == 0)
    }
}

@Suite("Interchange building blocks")
struct InterchangeBuildingBlockTests {
    @Test("ISO 8601 timestamps round-trip exactly and show at least milliseconds")
    func timestamps() throws {
        let dates = [
            Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 700_000_000.123),
            Date(timeIntervalSinceReferenceDate: -1_000_000_000.5), Date(timeIntervalSinceReferenceDate: 1.0 / 3.0),
            Date(timeIntervalSinceReferenceDate: 86_399.9999999),
        ]
        for date in dates {
            let text = ISO8601Timestamp.string(from: date)
            #expect(
                ISO8601Timestamp.date(from: text)?.timeIntervalSinceReferenceDate.bitPattern
                    == date.timeIntervalSinceReferenceDate.bitPattern, "\(text)")
        }
        #expect(ISO8601Timestamp.string(from: Date(timeIntervalSinceReferenceDate: 0)) == "2001-01-01T00:00:00.000Z")
        #expect(ISO8601Timestamp.date(from: "1990-05-01T00:00:00Z") == Date(timeIntervalSince1970: 641_520_000))
        #expect(ISO8601Timestamp.date(from: "1990-05-01T02:00:00+02:00") == Date(timeIntervalSince1970: 641_520_000))
        #expect(ISO8601Timestamp.date(from: "1990-13-01") == nil)
        #expect(ISO8601Timestamp.date(from: "yesterday") == nil)
    }

    @Test("interchange dates read back bit for bit, also those whose fraction needs more than 17 digits")
    func tinyFractions() throws {
        let attribute = AttributeDescription("when", .date)
        for seconds in [Double.leastNonzeroMagnitude, 1e-20, -3.5e-18, 0.1, 1.0 / 3.0, -0.000_123_456_789_012_345_678] {
            let json = InterchangeValue.json(.date(Date(timeIntervalSinceReferenceDate: seconds)))
            let read = try InterchangeValue.storeValue(json, for: attribute).get()
            guard case .date(let date) = read else {
                Issue.record("\(seconds): read back as \(read)")
                continue
            }
            #expect(
                date.timeIntervalSinceReferenceDate.bitPattern == seconds.bitPattern,
                "\(seconds) is written \(json) and reads back as \(date.timeIntervalSinceReferenceDate)")
        }
    }

    @Test("JSON strings escape every control character as \\u00XX")
    func controlCharacters() throws {
        let text = String(decoding: (0..<32).map { UInt8($0) }, as: UTF8.self)
        let written = JSONValue.string(text).serialized(pretty: false)
        #expect(
            written
                == #""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\t\n\u000b\u000c\r\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f""#
        )
        #expect(try JSONParser.parse(Data(written.utf8)) == .string(text))
    }

    @Test("the JSON parser keeps key order and number text, and names the place of a syntax error")
    func parser() throws {
        let value = try JSONParser.parse(
            Data(#"{"b": 1.50, "a": [true, null, "\u00e9\n"], "big": 12345678901234567890}"#.utf8))
        #expect(value.objectValue?.map(\.0) == ["b", "a", "big"])
        #expect(value["b"] == .number("1.50"))
        #expect(value["big"] == .number("12345678901234567890"))
        #expect(value["a"] == .array([.bool(true), .null, .string("é\n")]))
        #expect(try JSONParser.parse(Data(value.serialized().utf8)) == value)
        #expect { try JSONParser.parse(Data("{\n \"a\": tru }".utf8)) } throws: { error in
            (error as? JSONSyntaxError).map { $0.line == 2 && $0.column == 7 } ?? false
        }
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(Data("[01]".utf8)) }
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(Data("{} x".utf8)) }
    }
}
