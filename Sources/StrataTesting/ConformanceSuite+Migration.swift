import Foundation
import Strata

// Migration on every driver that can copy and replace its stores (StoreDriverFactory's
// replaceStore/destroyStore/copyStore and, where it can, StoreDriver.migrateInPlace). The rule each
// case checks: a migration gives exactly the migrated content, or fails leaving exactly the old.
extension ConformanceSuite {
    /// The migration cases: run them from a driver's test target when its stores can be migrated
    /// (file stores and the in-memory store; a database server's store may not support replacing).
    public static var migrationCases: [ConformanceCase] {
        migrationRunCases + migrationFailureCases + migrationWiringCases
    }

    /// A store of ``MigrationModels/version1`` seeded with `people` people, in a fresh directory.
    struct MigrationFixture {
        let directory: TemporaryDirectory
        let harness: DriverHarness
        let url: URL
        let people: Int

        init(_ harness: DriverHarness, people: Int = 40) throws {
            directory = try TemporaryDirectory(prefix: "migration-\(harness.name)")
            self.harness = harness
            self.people = people
            guard let url = harness.location(directory.url) else {
                throw ConformanceFailure(message: "the driver has no store location", file: #fileID, line: #line)
            }
            self.url = url
            let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version1)
            let store = try coordinator.addPersistentStore(type: harness.storeType, at: url, options: harness.options)
            try MigrationModels.seed(ManagedObjectContext(coordinator: coordinator), people: people)
            try coordinator.remove(store)
        }

        /// Opens the store with `model` (no migration) and runs `body` with a context on it.
        func open<T>(
            _ model: ManagedObjectModel, options: StoreOptions? = nil,
            _ body: (ManagedObjectContext, PersistentStore) throws -> T
        ) throws -> T {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(
                type: harness.storeType, at: url, options: options ?? harness.options)
            defer { try? coordinator.remove(store) }  // the checks' reads change nothing
            return try body(ManagedObjectContext(coordinator: coordinator), store)
        }

        /// Every version-1 row as text, sorted: what "the store is unchanged" compares.
        func version1Content() throws -> [String] {
            try open(MigrationModels.version1) { context, _ in try Self.content(context) }
        }

        static func content(_ context: ManagedObjectContext) throws -> [String] {
            var lines: [String] = []
            for person in try context.fetch(FetchRequest(entityName: "Person")) {
                let pets = person.objects(forKey: "pets").compactMap { $0["name"] as? String }.sorted()
                let clubs = person.objects(forKey: "clubs").compactMap { $0["title"] as? String }.sorted()
                lines.append(
                    "\(person.entity.name)|\(person["name"] ?? "")|\(person["age"] ?? "")|\(person["nickname"] ?? "")|\(person["city"] ?? "")|\(person.entity.name == "Employee" ? person["salary"] ?? "" : "")|\(pets)|\(clubs)|\(person.objectID.uriRepresentation())"
                )
            }
            return lines.sorted()
        }

        /// Plans and runs the migration to `model`.
        @discardableResult
        func migrate(to model: ManagedObjectModel, mapping: MappingModel? = nil, backup: URL? = nil) throws
            -> StoreMigration.Outcome
        {
            var options = harness.options
            options.migration.backupURL = backup
            guard
                let migration = try StoreMigration.plan(
                    storeAt: url, type: harness.storeType, to: model, options: options, mappingModel: mapping)
            else { throw ConformanceFailure(message: "the store needs no migration", file: #fileID, line: #line) }
            return try migration.run()
        }
    }

    static var migrationRunCases: [ConformanceCase] {
        [
            ConformanceCase(
                "scanRows hands over an entity's own rows in key order, in batches, with to-many relationships filled"
            ) { harness in
                let fixture = try MigrationFixture(harness, people: 23)
                let driver = try harness.storeType.factory.makeDriver(
                    StoreOpenRequest(
                        url: fixture.url, model: MigrationModels.version1, configuration: nil,
                        options: StoreOptions(isReadOnly: true, createIfMissing: false)))
                defer { try? driver.close() }  // read-only
                let person = MigrationModels.version1.entity(named: "Person")!  // the model has it
                var batches: [[RowSnapshot]] = []
                try driver.scanRows(RowScan(entity: person, batchSize: 5)) { batches.append($0) }
                let rows = batches.flatMap { $0 }
                try require(batches.allSatisfy { $0.count <= 5 }, "batches of at most 5")
                try requireEqual(rows.count, 23 - 23 / 5, "the people who are not employees")
                try requireEqual(rows.map(\.id), rows.map(\.id).sorted(), "key order")
                try require(rows.allSatisfy { $0.id.entity == person.entityNumber }, "only Person rows")
                let pets = person.index(ofProperty: "pets")!  // the entity has it
                try require(
                    rows.allSatisfy { if case .references = $0.values[pets] { true } else { false } }, "pets filled")
                let withPets = rows.filter {
                    if case .references(let ids) = $0.values[pets] { !ids.isEmpty } else { false }
                }
                try requireEqual(
                    withPets.count, (0..<11).filter { $0 % 5 != 4 }.count, "people of the first half have a pet")
            },
            ConformanceCase(
                "migration: a rename through renaming identifiers, a removed attribute, an added attribute with a default, a widened integer and a new optional attribute keep every row's data"
            ) { harness in
                let fixture = try MigrationFixture(harness)
                let before = try fixture.open(MigrationModels.version1) { context, store in
                    (
                        store.identifier,
                        try context.fetch(
                            FetchRequest(
                                entityName: "Person", predicate: try FetchPredicate(format: "name == 'person 9'")))[0]
                            .objectID.rowID.primaryKey
                    )
                }
                try fixture.migrate(to: MigrationModels.version2)
                try fixture.open(MigrationModels.version2) { context, store in
                    let problems = try MigrationModels.differences(context, people: fixture.people)
                    try require(problems.isEmpty, "the migrated rows: \(problems.prefix(5))")
                    try requireEqual(store.identifier, before.0, "the store's identifier")
                    let nine = try context.fetch(
                        FetchRequest(entityName: "Member", predicate: try FetchPredicate(format: "name == 'person 9'")))
                    try requireEqual(nine.first?.objectID.rowID.primaryKey, before.1, "person 9's primary key")
                    try require(
                        MigrationModels.version2.isConfiguration(nil, compatibleWithStoreMetadata: store.metadata),
                        "the store records version 2")
                }
            },
            ConformanceCase(
                "migration: a migrated store takes new saves and keeps them across a reopen, and its keys are not handed out again"
            ) { harness in
                let fixture = try MigrationFixture(harness)
                try fixture.migrate(to: MigrationModels.version2)
                let newKey = try fixture.open(MigrationModels.version2) { context, _ in
                    let member = try context.insertNewObject(forEntityName: "Member")
                    member["name"] = "newcomer"
                    member["age"] = 70_000
                    try context.save()
                    return member.objectID.rowID.primaryKey
                }
                try require(newKey > Int64(fixture.people), "the new member's key \(newKey) is past the copied keys")
                try fixture.open(MigrationModels.version2) { context, _ in
                    let found = try context.fetch(
                        FetchRequest(entityName: "Member", predicate: try FetchPredicate(format: "name == 'newcomer'")))
                    try requireEqual(found.first?["age"] as? Int, 70_000, "the newcomer's age (Integer 64 now)")
                    try requireEqual(found.first?["status"] as? String, "active", "the newcomer's default status")
                }
            },
            ConformanceCase("migration: a to-one relationship becomes to-many and keeps its destination") { harness in
                let fixture = try MigrationFixture(harness)
                var owners = RelationshipDescription("owners", destination: "Person", inverse: "pets", toMany: true)
                owners.renamingIdentifier = "owner"
                let model = try Self.editing(MigrationModels.version1, "Pet") { _ in
                    [.attribute("name", .string), .relationship(owners)]
                } person: { properties in
                    properties.map { property in
                        guard property.name == "pets" else { return property }
                        return .toMany("pets", "Pet", inverse: "owners")
                    }
                }
                try fixture.migrate(to: model)
                try fixture.open(model) { context, _ in
                    let pets = try context.fetch(FetchRequest(entityName: "Pet"))
                    try requireEqual(pets.count, fixture.people / 2, "the pets")
                    for pet in pets {
                        let expected = (pet["name"] as? String).map {
                            $0.replacingOccurrences(of: "pet", with: "person")
                        }
                        try requireEqual(
                            pet.objects(forKey: "owners").map { $0["name"] as? String }, [expected],
                            "the owners of \(pet["name"] ?? "")")
                    }
                }
            },
            ConformanceCase("migration: a mapping model with a registered policy runs through objects in three phases")
            { harness in
                let fixture = try MigrationFixture(harness, people: 12)
                let className = "ConformanceUppercasePolicy"
                EntityMigrationPolicy.register(className: className) {
                    let policy = ClosureMigrationPolicy()
                    policy.createDestinationInstances = { source, mapping, manager in
                        let destination = try manager.destinationContext!.insertNewObject(
                            forEntityName: mapping.destinationEntityName!)  // a running migration has both
                        destination["name"] = (source["name"] as? String)?.uppercased()
                        destination["age"] = source["age"]
                        destination["town"] = source["city"]
                        manager.associate(sourceInstance: source, withDestinationInstance: destination, for: mapping)
                    }
                    return policy
                }
                defer { EntityMigrationPolicy.unregister(className: className) }
                let inferred = try MappingModel.inferredMappingModel(
                    forSourceModel: MigrationModels.version1, destinationModel: MigrationModels.version2)
                let mappings = inferred.entityMappings.map { mapping -> EntityMapping in
                    var copy = mapping
                    if mapping.destinationEntityName == "Member" || mapping.destinationEntityName == "Employee" {
                        copy.entityMigrationPolicyClassName = className
                    }
                    return copy
                }
                let outcome = try fixture.migrate(
                    to: MigrationModels.version2, mapping: try MappingModel(entityMappings: mappings))
                try requireEqual(outcome.strategy, .objects, "how it ran")
                try fixture.open(MigrationModels.version2) { context, _ in
                    let names = try context.fetch(FetchRequest(entityName: "Member")).compactMap {
                        $0["name"] as? String
                    }
                    try requireEqual(
                        names.sorted(), (0..<12).map { "PERSON \($0)" }.sorted(), "the names, made by the policy")
                    let pet = try context.fetch(
                        FetchRequest(entityName: "Pet", predicate: try FetchPredicate(format: "name == 'pet 3'")))
                    try requireEqual(
                        pet.first?.object(forKey: "owner")?["name"] as? String, "PERSON 3",
                        "pet 3's owner, related in phase 2")
                    let club = try context.fetch(
                        FetchRequest(entityName: "Club", predicate: try FetchPredicate(format: "title == 'club 1'")))
                    try requireEqual(
                        club.first?.objects(forKey: "members").count, 4, "club 1's members (every third person)")
                }
            },
            ConformanceCase(
                "migration: staged stages step a store from version 1 through 2 to 3, running the custom stage's handlers"
            ) { harness in
                let fixture = try MigrationFixture(harness, people: 10)
                let v1 = try ManagedObjectModelReference(model: MigrationModels.version1)
                let v2 = try ManagedObjectModelReference(model: MigrationModels.version2)
                let v3 = try ManagedObjectModelReference(model: MigrationModels.version3)
                let custom = CustomMigrationStage(migratingFrom: v2, to: v3)
                let seen = Locked<[String]>([])
                custom.willMigrateHandler = { manager, _ in
                    let context = manager.container!.newBackgroundContext()  // set while handlers run
                    let count = try context.count(for: FetchRequest(entityName: "Member"))
                    seen.withLock { $0.append("will \(count)") }
                }
                custom.didMigrateHandler = { manager, _ in
                    let context = manager.container!.newBackgroundContext()  // set while handlers run
                    for member in try context.fetch(FetchRequest(entityName: "Member")) {
                        member["email"] = "\(member["name"] ?? "")@example.com"
                    }
                    try context.save()
                    seen.withLock { $0.append("did") }
                }
                let manager = StagedMigrationManager([LightweightMigrationStage([v1, v2]), custom])
                try manager.migrateStore(at: fixture.url, type: harness.storeType, options: harness.options)
                try requireEqual(seen.withLock { $0 }, ["will 10", "did"], "the handlers ran once each, in order")
                try fixture.open(MigrationModels.version3) { context, _ in
                    let members = try context.fetch(FetchRequest(entityName: "Member"))
                    try require(
                        members.allSatisfy { ($0["email"] as? String)?.hasSuffix("@example.com") == true },
                        "every member got an email")
                    try require(try MigrationModels.differences(context, people: 10).isEmpty, "the rest of the data")
                }
            },
            ConformanceCase("migration: a backup keeps the old store as it was") { harness in
                let fixture = try MigrationFixture(harness, people: 10)
                let before = try fixture.version1Content()
                let folder = fixture.directory.url.appendingPathComponent("backup-\(UUID().uuidString.prefix(8))")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let backup = fixture.harness.location(folder) ?? folder.appendingPathComponent("store")
                let outcome = try fixture.migrate(to: MigrationModels.version2, backup: backup)
                try requireEqual(outcome.backupURL, backup, "the backup's location")
                let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version1)
                let store = try coordinator.addPersistentStore(
                    type: harness.storeType, at: backup, options: harness.options)
                let kept = try MigrationFixture.content(ManagedObjectContext(coordinator: coordinator))
                try coordinator.remove(store)
                try requireEqual(kept, before, "the backup's content")
            },
        ]
    }

    /// `model` with the properties of `Pet` and `Person` rewritten.
    static func editing(
        _ model: ManagedObjectModel, _ name: String, pet: ([PropertyDescription]) -> [PropertyDescription],
        person: ([PropertyDescription]) -> [PropertyDescription] = { $0 }
    ) throws -> ManagedObjectModel {
        try ManagedObjectModel(
            entities: model.entities.map { entity in
                let properties =
                    entity.name == name
                    ? pet(entity.ownProperties)
                    : entity.name == "Person" ? person(entity.ownProperties) : entity.ownProperties
                return EntityDescription(
                    entity.name, parent: entity.superentityName, isAbstract: entity.isAbstract, properties: properties,
                    uniquenessConstraints: entity.uniquenessConstraints, indexes: entity.indexes,
                    renamingIdentifier: entity.renamingIdentifier)
            })
    }

    /// ``MigrationModels/version2`` with `Member`'s own properties rewritten, and its constraints.
    static func version2(members: ([PropertyDescription]) -> [PropertyDescription], constraints: [[String]] = []) throws
        -> ManagedObjectModel
    {
        try ManagedObjectModel(
            entities: MigrationModels.version2.entities.map { entity in
                guard entity.name == "Member" else {
                    return EntityDescription(
                        entity.name, parent: entity.superentityName, properties: entity.ownProperties,
                        renamingIdentifier: entity.renamingIdentifier)
                }
                return EntityDescription(
                    "Member", properties: members(entity.ownProperties), uniquenessConstraints: constraints,
                    renamingIdentifier: "Person")
            })
    }
}
