import Foundation
import Strata
import StrataTesting
import StrataTools

/// What the migration kill tests run and check: a store of ``MigrationModels/version1`` seeded
/// with `MigrationModels.seed`, migrated on open to ``MigrationModels/version2`` (the
/// change: an entity and an attribute renamed, an attribute dropped, one widened, a required one
/// with a default added). SQLite runs it in place, XML and LMDB by copying into a new store and
/// swapping it in.
///
/// - `migration-seed DRIVER PATH PEOPLE`: writes the version 1 store.
/// - `migration-open DRIVER PATH [BACKUP]`: opens the store with version 2 and automatic,
///   inferred migration (keeping a backup at BACKUP), then prints `migrated`.
/// - `migration-pause DRIVER PATH BACKUP MARKER`: migrates the store to version 2 keeping a backup
///   at BACKUP and, once the backup is taken (at the migration's first progress report), creates
///   MARKER and waits there to be killed.
/// - `migration-check DRIVER PATH PEOPLE`: opens the store with the model it embeds and prints
///   `old` (version 1, every row of the seed as written), `new` (version 2, every row migrated),
///   or `broken WHY`.
enum MigrationKill {
    static func run(_ arguments: [String]) throws {
        guard arguments.count >= 3, let type = storeType(arguments[1]) else {
            throw CaseFailure(
                "usage: \(arguments[0]) DRIVER PATH …; unknown driver '\(arguments.dropFirst().first ?? "")'")
        }
        let url = URL(fileURLWithPath: arguments[2])
        switch arguments[0] {
        case "migration-seed":
            guard arguments.count == 4, let people = Int(arguments[3]) else {
                throw CaseFailure("migration-seed DRIVER PATH PEOPLE")
            }
            let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version1)
            let store = try coordinator.addPersistentStore(type: type, at: url)
            try MigrationModels.seed(ManagedObjectContext(coordinator: coordinator), people: people)
            try coordinator.remove(store)
        case "migration-open":
            var options = StoreOptions(timeout: 10)
            options.shouldMigrateStoreAutomatically = true
            options.shouldInferMappingModelAutomatically = true
            options.migration.backupURL = arguments.count > 3 ? URL(fileURLWithPath: arguments[3]) : nil
            let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version2)
            let store = try coordinator.addPersistentStore(type: type, at: url, options: options)
            try coordinator.remove(store)
            KillLoops.emit("migrated")
        case "migration-pause":
            guard arguments.count == 5 else { throw CaseFailure("migration-pause DRIVER PATH BACKUP MARKER") }
            var options = StoreOptions(timeout: 10)
            options.migration.backupURL = URL(fileURLWithPath: arguments[3])
            let marker = arguments[4]
            guard
                let migration = try StoreMigration.plan(
                    storeAt: url, type: type, to: MigrationModels.version2, options: options)
            else { throw CaseFailure("the store needs no migration") }
            try migration.run { _ in
                guard !FileManager.default.fileExists(atPath: marker) else { return }
                guard FileManager.default.createFile(atPath: marker, contents: Data()) else { return }
                while true { sleep(60) }  // until the test kills this process
            }
            KillLoops.emit("migrated")
        default:
            guard arguments.count == 4, let people = Int(arguments[3]) else {
                throw CaseFailure("migration-check DRIVER PATH PEOPLE")
            }
            KillLoops.emit(check(type, url, people: people))
        }
    }

    static func storeType(_ driver: String) -> StoreType? {
        StoreType.named(KnownDriver(rawValue: driver)?.driverName ?? driver)
    }

    /// `old`, `new` or `broken WHY` for the store at `url`.
    static func check(_ type: StoreType, _ url: URL, people: Int) -> String {
        do {
            guard
                let metadata = try type.factory.metadata(
                    at: url, options: StoreOptions(isReadOnly: true, createIfMissing: false))
            else {
                return "broken the store is missing"
            }
            let version: String
            let model: ManagedObjectModel
            if MigrationModels.version1.isConfiguration(nil, compatibleWithStoreMetadata: metadata) {
                (version, model) = ("old", MigrationModels.version1)
            } else if MigrationModels.version2.isConfiguration(nil, compatibleWithStoreMetadata: metadata) {
                (version, model) = ("new", MigrationModels.version2)
            } else {
                return
                    "broken the store's metadata matches neither version: \(metadata.entityVersionHashes.keys.sorted())"
            }
            if let embedded = metadata.values[StoreMetadata.modelKey]?.dataValue,
                try ManagedObjectModel(encodedRepresentation: embedded).versionHash != model.versionHash
            {
                return "broken the store's version hashes say \(version), its embedded model does not"
            }
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(
                type: type, at: url, options: StoreOptions(isReadOnly: true, createIfMissing: false))
            defer { try? coordinator.remove(store) }  // read-only: closing changes nothing
            let context = ManagedObjectContext(coordinator: coordinator)
            let problems =
                version == "old"
                ? try version1Differences(context, people: people)
                : try MigrationModels.differences(context, people: people)
            return problems.isEmpty ? version : "broken \(version) store: \(problems.prefix(5).joined(separator: "; "))"
        } catch {
            return "broken the store does not open: \(error)"
        }
    }

    /// What differs between a store of version 1 and what `MigrationModels.seed` wrote.
    static func version1Differences(_ context: ManagedObjectContext, people: Int) throws -> [String] {
        var problems: [String] = []
        let persons = try context.fetch(FetchRequest(entityName: "Person"))
        if persons.count != people { problems.append("\(persons.count) people, expected \(people)") }
        let byName = Dictionary(persons.compactMap { person in (person["name"] as? String).map { ($0, person) } }) {
            a, _ in a
        }
        for index in 0..<people {
            guard let person = byName["person \(index)"] else {
                problems.append("person \(index) is missing")
                continue
            }
            let isEmployee = index % 5 == 4
            if (person.entity.name == "Employee") != isEmployee {
                problems.append("person \(index) is a \(person.entity.name)")
            }
            if person["age"] as? Int != index % 120 {
                problems.append("person \(index): age \(person["age"] ?? "nil")")
            }
            if person["nickname"] as? String != "nick \(index)" { problems.append("person \(index): nickname") }
            let city = index % 7 == 0 ? nil : "city \(index % 13)"
            if person["city"] as? String != city { problems.append("person \(index): city \(person["city"] ?? "nil")") }
            if isEmployee, person["salary"] as? Double != Double(index) * 1.5 {
                problems.append("person \(index): salary")
            }
            let pets = person.objects(forKey: "pets").compactMap { $0["name"] as? String }
            if pets != (index < people / 2 ? ["pet \(index)"] : []) { problems.append("person \(index): pets \(pets)") }
            let clubs = Set(person.objects(forKey: "clubs").compactMap { $0["title"] as? String })
            let expected = Set([2, 3, 5].enumerated().filter { index % $0.element == 0 }.map { "club \($0.offset)" })
            if clubs != expected { problems.append("person \(index): clubs \(clubs.sorted())") }
            if problems.count > 20 { break }
        }
        let pets = try context.count(for: FetchRequest(entityName: "Pet"))
        if pets != people / 2 { problems.append("\(pets) pets, expected \(people / 2)") }
        return problems
    }
}
