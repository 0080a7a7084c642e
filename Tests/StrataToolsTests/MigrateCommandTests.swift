import Foundation
import Strata
import StrataSQLite
import StrataTesting
import StrataTools
import Testing

/// `strata migrate` and `strata model diff`'s lightweight verdict, through the real binary.
@Suite("strata migrate")
struct MigrateCommandTests {
    /// A SQLite store of ``MigrationModels/version1`` with `people` people, and the two models
    /// written as Strata model files.
    struct Fixture {
        let directory: TemporaryDirectory
        let store: URL
        let version1: String
        let version2: String

        init(people: Int = 40) throws {
            directory = try TemporaryDirectory(prefix: "migrate-command")
            store = directory.file("people.sqlite")
            let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version1)
            let attached = try coordinator.addPersistentStore(type: .sqlite, at: store)
            try MigrationModels.seed(ManagedObjectContext(coordinator: coordinator), people: people)
            try coordinator.remove(attached)
            version1 = directory.file("v1.json").path
            try MigrationModels.version1.encodedRepresentation().write(to: URL(fileURLWithPath: version1))
            version2 = directory.file("v2.json").path
            try MigrationModels.version2.encodedRepresentation().write(to: URL(fileURLWithPath: version2))
        }

        /// Every file in the directory with its bytes.
        func files() throws -> [String: Data] {
            var out: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) {
                out[name] = try Data(contentsOf: directory.file(name))
            }
            return out
        }

        func open<T>(_ model: ManagedObjectModel, _ body: (ManagedObjectContext) throws -> T) throws -> T {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let attached = try coordinator.addPersistentStore(type: .sqlite, at: store)
            defer { try? coordinator.remove(attached) }  // reads only
            return try body(ManagedObjectContext(coordinator: coordinator))
        }
    }

    @Test(
        "--dry-run writes nothing (every file byte-identical) and prints the inferred mapping with each entity's rows")
    func dryRun() throws {
        let fixture = try Fixture()
        let before = try fixture.files()
        let result = try runStrata(["migrate", fixture.store.path, "--model", fixture.version2, "--dry-run"])
        #expect(result.status == 0, "\(result.stderr)")
        let after = try fixture.files()
        let changed = Set(after.keys).union(before.keys).filter { after[$0] != before[$0] }.sorted()
        #expect(changed.isEmpty, "the dry run changed \(changed)")
        #expect(result.stdout.contains("Would migrate"), "\(result.stdout)")
        #expect(result.stdout.contains("lightweight"))
        #expect(result.stdout.contains("mapping inferred"))
        let row = try #require(
            result.stdout.split(separator: "\n").first { $0.contains("IEM_Transform_Person") }, "\(result.stdout)")
        #expect(row.contains("Person") && row.hasSuffix(" 32"), "\(row)")  // 40 people, 8 of them employees
        #expect(result.stdout.contains("Dry run: nothing was written."))
        #expect(result.stderr.isEmpty, "a dry run draws no progress")
        let json = try runStrata(["migrate", fixture.store.path, "--model", fixture.version2, "--dry-run", "--json"])
        #expect(json.status == 0)
        let document = try parseJSON(json.stdout)
        #expect(document["dryRun"] == .bool(true))
        #expect(document["lightweight"] == .bool(true))
        let mappings = try #require(document["entityMappings"]?.arrayValue)
        let rows = mappings.compactMap { $0["sourceRows"]?.intValue }
        let total: Int = rows.reduce(0, +)
        #expect(total == 63, "40 people, 20 pets and 3 clubs: \(rows)")
        #expect(try fixture.files() == before)
    }

    @Test("migrate runs the inferred migration with a backup, keeps every row, and a second run has nothing to do")
    func migrate() throws {
        let fixture = try Fixture()
        let original = try Data(contentsOf: fixture.store)
        let result = try runStrata(["migrate", fixture.store.path, "--model", fixture.version2, "--backup"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Migrated") && result.stdout.contains("Strategy: inPlace"), "\(result.stdout)")
        #expect(result.stderr.contains("copied") || result.stderr.isEmpty || result.stderr.contains("rows"))
        let backup = fixture.store.path + ".backup"
        #expect(result.stdout.contains("Backup: \(backup)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: backup)) == original, "the backup is the store as it was")
        let problems = try fixture.open(MigrationModels.version2) { try MigrationModels.differences($0, people: 40) }
        #expect(problems.isEmpty, "\(problems.prefix(3))")
        let again = try runStrata(["migrate", fixture.store.path, "--model", fixture.version2])
        #expect(again.status == 0)
        #expect(again.stdout.contains("nothing to migrate"))
        let refused = try runStrata([
            "migrate", fixture.store.path, "--model", fixture.version2, "--from-model", fixture.version1, "--backup",
        ])
        #expect(
            refused.status == 64 && refused.stderr.contains(backup) && refused.stderr.contains("already exists"),
            "\(refused.stderr)")
    }

    @Test(
        "migrate --mapping runs an Xcode mapping model: its filter, written expression and Xcode's default expressions are evaluated"
    )
    func mappingModel() throws {
        let fixture = try Fixture()
        var mappings = XcodeMappingFixture.migrationModels
        mappings[0].attributes = ["age", "name", "town"]
        mappings[1].attributes = ["age", "name", "salary", "town"]
        mappings[1].propertyExtras = mappings[0].propertyExtras
        mappings[1].filter = "age >= 18"
        let bundle = try XcodeMappingFixture.write(XcodeMappingFixture.document(mappings), in: fixture.directory)
        let dry = try runStrata([
            "migrate", fixture.store.path, "--model", fixture.version2, "--mapping", bundle.path, "--dry-run",
        ])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("PersonToMember") && dry.stdout.contains("filter age >= 18"), "\(dry.stdout)")
        #expect(dry.stdout.contains("town ← $source.city"), "\(dry.stdout)")
        let result = try runStrata([
            "migrate", fixture.store.path, "--model", fixture.version2, "--mapping", bundle.path, "--quiet",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Strategy: objects"), "\(result.stdout)")
        try fixture.open(MigrationModels.version2) { context in
            let members = try context.fetch(FetchRequest(entityName: "Member"))
            let indices = Set(
                members.compactMap { ($0["name"] as? String)?.split(separator: " ").last.flatMap { Int($0) } })
            #expect(indices == Set(18..<40), "people under 18 are filtered out")
            for member in members {
                let index = try #require((member["name"] as? String)?.split(separator: " ").last.flatMap { Int($0) })
                #expect(member["age"] as? Int == index)
                #expect(member["town"] as? String == (index % 7 == 0 ? nil : "city \(index % 13)"), "town from city")
                #expect(member["status"] as? String == "active", "the new attribute's default")
                #expect((member.entity.name == "Employee") == (index % 5 == 4))
                let clubs = Set(member.objects(forKey: "clubs").compactMap { $0["title"] as? String })
                #expect(
                    clubs == Set([2, 3, 5].enumerated().filter { index % $0.element == 0 }.map { "club \($0.offset)" }))
            }
            let pets = try context.fetch(FetchRequest(entityName: "Pet"))
            #expect(pets.count == 20)
            #expect(
                Set(pets.compactMap { $0.object(forKey: "owner")?["name"] as? String }) == ["person 18", "person 19"])
        }
    }

    @Test(
        "Apple's SampleModel_V1.sqlite migrates to SampleModel2 through migrate --from-model, keeping its rows",
        .needsCorpus)
    func appleSampleModel() throws {
        let corpus = URL(fileURLWithPath: try #require(ProcessInfo.processInfo.environment["STRATA_CORPUS"]))
        let directory = try TemporaryDirectory(prefix: "migrate-apple")
        let store = directory.file("SampleModel.sqlite")
        try FileManager.default.copyItem(at: corpus.appendingPathComponent("sqlite/SampleModel_V1.sqlite"), to: store)
        let v1 = corpus.appendingPathComponent("models/alemar11__CoreDataPlus__SampleModel.xcdatamodel.xml").path
        let v2 = corpus.appendingPathComponent("models/alemar11__CoreDataPlus__SampleModel2.xcdatamodel.xml").path
        let dry = try runStrata(["migrate", store.path, "--model", v2, "--from-model", v1, "--dry-run", "--json"])
        #expect(dry.status == 0, "\(dry.stderr)")
        let plan = try parseJSON(dry.stdout)
        #expect(plan["lightweight"] == .bool(true))
        #expect(plan["sourceModel"] == .string("given"))
        let planned = try #require(plan["entityMappings"]?.arrayValue).compactMap { $0["sourceRows"]?.intValue }.reduce(
            0, +)
        #expect(planned > 0)
        let result = try runStrata(["migrate", store.path, "--model", v2, "--from-model", v1, "--json", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let outcome = try parseJSON(result.stdout)
        #expect(outcome["strategy"] == .string("inPlace"))
        let rows = try #require(outcome["migratedRows"]?.objectValue).compactMap { $0.1.intValue }.reduce(0, +)
        #expect(rows == planned, "every row is kept")
        let metadata = try #require(try StoreOpener.metadata(at: StoreLocation(scheme: .sqlite, url: store)))
        let model = try ModelFile.load(v2)
        #expect(
            model.isConfiguration(nil, compatibleWithStoreMetadata: metadata),
            "the store now carries SampleModel2's hashes")
        let again = try runStrata(["migrate", store.path, "--model", v2])
        #expect(again.status == 0 && again.stdout.contains("nothing to migrate"), "\(again.stdout)\(again.stderr)")
    }

    @Test("bad arguments exit 64 and failed migrations exit 1, each naming the file, and the store is left as it was")
    func errors() throws {
        let fixture = try Fixture(people: 5)
        let before = try Data(contentsOf: fixture.store)
        let missing = try runStrata([
            "migrate", fixture.directory.file("none.sqlite").path, "--model", fixture.version2,
        ])
        #expect(missing.status == 64 && missing.stderr.contains("none.sqlite"), "\(missing.stderr)")
        let noModel = try runStrata([
            "migrate", fixture.store.path, "--model", fixture.directory.file("nope.json").path,
        ])
        #expect(noModel.status == 64 && noModel.stderr.contains("nope.json"), "\(noModel.stderr)")
        let noMapping = try runStrata([
            "migrate", fixture.store.path, "--model", fixture.version2, "--mapping",
            fixture.directory.file("Gone.xcmappingmodel").path,
        ])
        #expect(noMapping.status == 64 && noMapping.stderr.contains("Gone.xcmappingmodel"), "\(noMapping.stderr)")
        let wrongSource = try runStrata([
            "migrate", fixture.store.path, "--model", fixture.version2, "--from-model", fixture.version2,
        ])
        #expect(wrongSource.status == 1 && wrongSource.stderr.contains("does not match"), "\(wrongSource.stderr)")
        var mappings = XcodeMappingFixture.migrationModels
        mappings[0].destination = "Nobody"
        let unfit = try XcodeMappingFixture.write(
            XcodeMappingFixture.document(mappings), named: "Unfit", in: fixture.directory)
        let wrong = try runStrata(["migrate", fixture.store.path, "--model", fixture.version2, "--mapping", unfit.path])
        #expect(wrong.status != 0 && wrong.stderr.contains("Nobody"), "\(wrong.stderr)")
        // A change inference cannot make: name becomes an Integer 32.
        let person = EntityDescription("Person", properties: [.attribute("name", .integer32)])
        let changed = fixture.directory.file("changed.json")
        try ManagedObjectModel(entities: [person]).encodedRepresentation().write(to: changed)
        let notInferred = try runStrata(["migrate", fixture.store.path, "--model", changed.path])
        #expect(
            notInferred.status == 1 && notInferred.stderr.contains("people.sqlite")
                && notInferred.stderr.contains("Person.name"), "\(notInferred.stderr)")
        #expect(try Data(contentsOf: fixture.store) == before)
        let memory = try runStrata(["migrate", "memory:", "--model", fixture.version2])
        #expect(memory.status == 64)
    }

    @Test("model diff says whether the change is lightweight and lists the changes that need a mapping model")
    func modelDiff() throws {
        let fixture = try Fixture(people: 1)
        let light = try runStrata(["model", "diff", fixture.version1, fixture.version2])
        #expect(light.status == 0, "\(light.stderr)")
        #expect(light.stdout.contains("lightweight: Strata (and Core Data) can infer the mapping"), "\(light.stdout)")
        let person = EntityDescription(
            "Person", properties: [.attribute("name", .integer32), .attribute("age", .string)])
        let changed = fixture.directory.file("changed.json")
        try ManagedObjectModel(entities: [person]).encodedRepresentation().write(to: changed)
        let heavy = try runStrata(["model", "diff", fixture.version1, changed.path])
        #expect(
            heavy.stdout.contains("not lightweight: a mapping model is needed for these changes:"), "\(heavy.stdout)")
        #expect(heavy.stdout.contains("Person.name") && heavy.stdout.contains("Person.age"), "\(heavy.stdout)")
        let json = try parseJSON(try runStrata(["model", "diff", fixture.version1, changed.path, "--json"]).stdout)
        #expect(json["lightweight"] == .bool(false))
        #expect((json["changesNeedingMappingModel"]?.arrayValue?.count ?? 0) >= 2)
    }
}

extension JSONValue {
    /// The integer, when this is a whole number.
    fileprivate var intValue: Int? {
        if case .number(let text) = self { return Int(text) }
        return nil
    }
}
