import Foundation
import Strata
import StrataInMemory
import StrataTesting
import StrataTools
import Testing

/// A demo-model store whose rows break the model's rules, written straight through the driver.
private func brokenStore() throws -> StoreLocation {
    let model = try Demo.makeModel()
    let location = memoryLocation("broken")
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    let store = try coordinator.addPersistentStore(type: .inMemory, at: location.url)
    let department = model.entity(named: "Department")!
    let employee = model.entity(named: "Employee")!
    func row(_ entity: EntityDescription, _ key: Int64, _ values: [String: StoreValue]) -> RowSnapshot {
        var slots = entity.properties.map { $0.relationship?.isToMany == true ? StoreValue.references([]) : .null }
        for (name, value) in values { slots[entity.index(ofProperty: name)!] = value }
        return RowSnapshot(id: RowID(entity: entity.entityNumber, primaryKey: key), version: 1, values: slots)
    }
    var batch = ChangeBatch()
    batch.inserts = [
        row(
            employee, 1,
            [
                "age": .integer(12), "email": .string("not an email"),
                "department": .reference(RowID(entity: department.entityNumber, primaryKey: 99)),
            ]),
        row(
            department, 2,
            ["name": .string("R"), "employees": .references([RowID(entity: employee.entityNumber, primaryKey: 3)])]),
        row(employee, 3, ["name": .string("C"), "age": .integer(30)]),
    ]
    _ = try store.driver.apply(batch)
    return location
}

@Suite("strata validate")
struct ValidateTests {
    @Test("a store saved through contexts is clean")
    func clean() throws {
        #expect(try StoreValidator.validate(try seededMemoryStore()).isEmpty)
    }

    @Test("dangling references, inverse mismatches and rule violations are each reported")
    func problems() throws {
        let problems = try StoreValidator.validate(try brokenStore())
        let kinds = problems.map(\.kind)
        #expect(kinds.contains(.danglingReference))
        #expect(kinds.contains(.inverseMismatch))
        #expect(kinds.contains(.required))
        #expect(
            problems.contains {
                $0.kind == .rule && $0.property == "age" && $0.message.contains("below the minimum 16")
            })
        #expect(problems.contains { $0.kind == .rule && $0.property == "email" })
        let dangling = try #require(problems.first { $0.kind == .danglingReference })
        #expect(dangling.object?.hasSuffix("/Employee/p1") == true)
        #expect(dangling.message.contains("/Department/p99"))
        let inverse = try #require(problems.first { $0.kind == .inverseMismatch })
        #expect(inverse.object?.hasSuffix("/Department/p2") == true)
        #expect(problems.count == 5)
    }

    @Test("the binary says valid and exits 0 for a clean store; a missing store exits 64")
    func binary() throws {
        let directory = try TemporaryDirectory()
        let result = try runStrata(["validate", "memory:", "--model", try writeDemoModel(in: directory)])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "memory: is valid.\n")
        let json = try runStrata(["validate", "memory:", "--model", try writeDemoModel(in: directory), "--json"])
        #expect(try parseJSON(json.stdout)["valid"] == .bool(true))
        let missing = try runStrata(["validate", directory.file("gone.xml").path])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("gone.xml"))
    }

    @Test("a store with problems makes validate exit 2 listing each problem", arguments: KnownDriver.fileBacked)
    func binaryProblems(_ scheme: KnownDriver) throws {
        let directory = try TemporaryDirectory()
        let target = fileLocation(scheme, "broken", in: directory)
        if scheme == .xml {
            // An XML store cannot hold a dangling idref: its reader refuses the file, so the
            // conversion's verification fails and nothing is left behind.
            #expect(throws: (any Error).self) { try StoreConverter.convert(from: try brokenStore(), to: target) }
            #expect(!FileManager.default.fileExists(atPath: target.url!.path))  // file locations have URLs
            return
        }
        try StoreConverter.convert(from: try brokenStore(), to: target)
        let result = try runStrata(["validate", target.description])
        #expect(result.status == 2)
        #expect(result.stdout.contains("points at"))
        // One-to-many inverses are stored once (as the to-one's key) in these layouts, so the
        // in-memory store's inverse mismatch cannot exist there: four of its five problems remain.
        #expect(result.stderr.contains("4 problems"))
    }
}
