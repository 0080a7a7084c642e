import Foundation
import Strata
import StrataTesting
import StrataTools
import Testing

@Suite("strata model show / diff")
struct ModelCommandTests {
    @Test("model show --json has the documented shape")
    func showJSON() throws {
        let directory = try TemporaryDirectory()
        let result = try runStrata(["model", "show", try writeConformanceModel(in: directory), "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try parseJSON(result.stdout)
        #expect(json["versionHash"] == .string(ConformanceModel.model.versionHash.hexString))
        let entities = try #require(json["entities"]?.arrayValue)
        let car = try #require(entities.first { $0["name"] == .string("Car") })
        #expect(car["parent"] == .string("Vehicle"))
        #expect(car["abstract"] == .bool(false))
        #expect(car["attributes"]?.arrayValue?.first?["name"] == .string("seats"))
        #expect(car["attributes"]?.arrayValue?.first?["type"] == .string("Integer 16"))
        #expect(car["attributes"]?.arrayValue?.first?["optional"] == .bool(true))
        let playlist = try #require(entities.first { $0["name"] == .string("Playlist") })
        let tracks = try #require(playlist["relationships"]?.arrayValue?.first)
        #expect(tracks["destination"] == .string("Track"))
        #expect(tracks["inverse"] == .string("playlists"))
        #expect(tracks["toMany"] == .bool(true))
        #expect(tracks["ordered"] == .bool(true))
        #expect(tracks["deleteRule"] == .string("Nullify"))
        #expect(json["configurations"]?["Staff"] == .array([.string("Department"), .string("Employee")]))
    }

    @Test("model show prints what the model file holds that Strata does not use, with file and line, and exits 0")
    func showWarnings() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.file("Odd.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Note" futureFlag="YES">
                    <attribute name="count" optional="YES" attributeType="Integer 32" defaultValueString="12abc"/>
                    <attribute name="done" attributeType="Boolean" defaultValueString="0.0"/>
                </entity>
            </model>
            """.utf8
        ).write(to: folder.appendingPathComponent("contents"))
        let text = try runStrata(["model", "show", folder.path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(
            text.stdout.contains("done: Boolean (required, default NO)")
                || text.stdout.contains("done: Boolean (required, default false)"))
        let lines = text.stdout.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex(of: "warnings (2):"), "\(text.stdout)")
        #expect(
            lines[start + 1].hasPrefix("  ") && lines[start + 1].contains("contents:3: <entity Note>: ")
                && lines[start + 1].contains("futureFlag"))
        #expect(lines[start + 2].contains("contents:4: <attribute Note.count>: ") && lines[start + 2].contains("12abc"))
        let json = try parseJSON(try runStrata(["model", "show", folder.path, "--json"]).stdout)
        let warnings = try #require(json["warnings"]?.arrayValue)
        #expect(warnings.count == 2)
        #expect(warnings.first?["line"] == .int(3) && warnings.first?["element"] == .string("entity Note"))
        #expect(warnings.last?["message"]?.stringValue?.contains("12abc") == true)
        #expect(warnings.first?["file"]?.stringValue?.hasSuffix("Odd.xcdatamodel/contents") == true)
        let clean = try runStrata(["model", "show", try writeDemoModel(in: directory)])
        #expect(!clean.stdout.contains("warnings"))
    }

    @Test("model show reads the model inside a store")
    func showStore() throws {
        let lines = ModelDescription.lines(
            try StoreOpener.resolveModel(at: try seededMemoryStore(), modelPath: nil).model)
        #expect(lines.contains("entity SportsCar : Car"))
        #expect(lines.contains("configuration Media: Playlist, Track, Chapter"))
    }

    @Test("diff finds added, removed, renamed and changed properties and says migration is needed")
    func diff() throws {
        let old = try ManagedObjectModel(entities: [
            EntityDescription(
                "Person",
                properties: [.attribute("name", .string), .attribute("age", .integer16), .attribute("nick", .string)]),
            EntityDescription("Pet"),
        ])
        let new = try ManagedObjectModel(entities: [
            EntityDescription(
                "Human",
                properties: [
                    .attribute(AttributeDescription("fullName", .string, renamingIdentifier: "name")),
                    .attribute("age", .integer32, isOptional: false), .attribute("email", .string),
                ],
                renamingIdentifier: "Person"),
            EntityDescription("Pet"),
        ])
        let diff = ModelDiff(old: old, new: new)
        #expect(diff.needsMigration)
        let text = diff.changes.map(\.description)
        #expect(text.contains { $0.hasPrefix("renamed  Human") && $0.contains("was Person") })
        #expect(text.contains { $0.hasPrefix("renamed  Human.fullName") && $0.contains("was name") })
        #expect(
            text.contains {
                $0.hasPrefix("changed  Human.age") && $0.contains("Integer 16 → Integer 32")
                    && $0.contains("now required")
            })
        #expect(text.contains("added    Human.email"))
        #expect(text.contains("removed  Person.nick"))
        #expect(!ModelDiff(old: old, new: old).needsMigration)
        #expect(ModelDiff(old: old, new: old).changes.isEmpty)
    }

    @Test("the binary diffs two model files and reports bad model files with exit 64")
    func binaryDiff() throws {
        let directory = try TemporaryDirectory()
        let same = try runStrata([
            "model", "diff", try writeDemoModel(in: directory), try writeDemoModel(in: directory),
        ])
        #expect(same.status == 0)
        #expect(same.stdout.contains("no migration needed"))
        let broken = directory.file("Broken.xcdatamodel")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try Data("<model><entity name=\"A\"></model>".utf8).write(to: broken.appendingPathComponent("contents"))
        let result = try runStrata(["model", "show", broken.path])
        #expect(result.status == 64)
        #expect(result.stderr.contains("Broken.xcdatamodel"))
        #expect(result.stderr.contains("line"))
        let missing = try runStrata(["model", "show", directory.file("None.xcdatamodeld").path])
        #expect(missing.status == 64)
    }

    @Test("diff of the corpus's SampleModel versions finds the renamed entity", .needsCorpus)
    func corpusDiff() throws {
        let files = try corpusModelFiles()
        let v1 = try #require(files.first { $0.lastPathComponent.hasPrefix("alemar11__CoreDataPlus__SampleModel.") })
        let v2 = try #require(files.first { $0.lastPathComponent.hasPrefix("alemar11__CoreDataPlus__SampleModel2.") })
        let diff = ModelDiff(old: try ManagedObjectModel(contentsOf: v1), new: try ManagedObjectModel(contentsOf: v2))
        #expect(diff.needsMigration)
        #expect(diff.changes.contains { $0.kind == .renamed })
    }
}
