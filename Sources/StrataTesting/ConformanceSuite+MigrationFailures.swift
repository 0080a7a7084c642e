import Foundation
import Strata

// Migrations that must fail, and how a failure leaves the store; the coordinator's wiring.
extension ConformanceSuite {
    static var migrationFailureCases: [ConformanceCase] {
        [
            ConformanceCase(
                "migration: a change that cannot be inferred fails before anything is written, listing the change"
            ) { harness in
                let fixture = try MigrationFixture(harness, people: 10)
                let before = try fixture.version1Content()
                let model = try Self.version2 { properties in
                    properties.map { $0.name == "age" ? .attribute("age", .string) : $0 }
                }
                try requireThrows(
                    "the migration",
                    matches: {
                        guard let error = $0 as? MigrationError, error.code == .inferenceFailed else { return false }
                        return error.changes.contains { $0.contains("Member.age") && $0.contains("String") }
                    }
                ) {
                    try fixture.migrate(to: model)
                }
                try requireEqual(try fixture.version1Content(), before, "the store's content")
            },
            ConformanceCase(
                "migration: existing rows that break a new uniqueness constraint fail the migration, and the store stays as it was"
            ) { harness in
                let fixture = try MigrationFixture(harness, people: 30)
                let before = try fixture.version1Content()
                let model = try Self.version2(members: { $0 }, constraints: [["town"]])
                try requireThrows(
                    "the migration",
                    matches: {
                        guard let error = $0 as? MigrationError, error.code == .constraintViolation else {
                            return false
                        }
                        return error.message.contains("town") && error.message.contains("Member")
                    }
                ) {
                    try fixture.migrate(to: model)
                }
                try requireEqual(try fixture.version1Content(), before, "the store's content")
            },
            ConformanceCase("migration: a new uniqueness constraint the rows keep is created and then enforced") {
                harness in
                let fixture = try MigrationFixture(harness, people: 20)
                let model = try Self.version2(members: { $0 }, constraints: [["name"]])
                try fixture.migrate(to: model)
                try fixture.open(model) { context, _ in
                    let twin = try context.insertNewObject(forEntityName: "Member")
                    twin["name"] = "person 3"
                    try requireThrows("saving a second 'person 3'") { try context.save() }
                }
            },
            ConformanceCase(
                "migration: an attribute that becomes required without a default fails on rows without a value, and the store stays as it was"
            ) { harness in
                let fixture = try MigrationFixture(harness, people: 20)
                let before = try fixture.version1Content()
                let model = try Self.version2 { properties in
                    properties.map { property in
                        guard property.name == "town" else { return property }
                        var town = AttributeDescription("town", .string, isOptional: false)
                        town.renamingIdentifier = "city"
                        return .attribute(town)
                    }
                }
                try requireThrows("the migration", matches: { ($0 as? MigrationError)?.code == .validation }) {
                    try fixture.migrate(to: model)
                }
                try requireEqual(try fixture.version1Content(), before, "the store's content")
            },
            ConformanceCase(
                "migration: an attribute that becomes required with a default takes the default where rows had none"
            ) { harness in
                let fixture = try MigrationFixture(harness, people: 20)
                let model = try Self.version2 { properties in
                    properties.map { property in
                        guard property.name == "town" else { return property }
                        var town = AttributeDescription(
                            "town", .string, isOptional: false, defaultValue: .string("nowhere"))
                        town.renamingIdentifier = "city"
                        return .attribute(town)
                    }
                }
                try fixture.migrate(to: model)
                try fixture.open(model) { context, _ in
                    let zero = try context.fetch(
                        FetchRequest(entityName: "Member", predicate: try FetchPredicate(format: "name == 'person 7'")))
                    try requireEqual(zero.first?["town"] as? String, "nowhere", "person 7 had no city")
                    let one = try context.fetch(
                        FetchRequest(entityName: "Member", predicate: try FetchPredicate(format: "name == 'person 1'")))
                    try requireEqual(one.first?["town"] as? String, "city 1", "person 1 kept hers")
                }
            },
            ConformanceCase(
                "migration: a mapping model naming entities the models lack is refused, listing them, and nothing changes"
            ) { harness in
                let fixture = try MigrationFixture(harness, people: 5)
                let before = try fixture.version1Content()
                let mapping = try MappingModel(entityMappings: [
                    EntityMapping(
                        name: "GhostToMember", mappingType: .transform, sourceEntityName: "Ghost",
                        destinationEntityName: "Member"),
                    EntityMapping(
                        name: "PetToWolf", mappingType: .transform, sourceEntityName: "Pet",
                        destinationEntityName: "Wolf"),
                ])
                try requireThrows(
                    "the migration",
                    matches: {
                        guard let error = $0 as? MigrationError, error.code == .invalidMapping else { return false }
                        return error.changes.contains { $0.contains("Ghost") }
                            && error.changes.contains { $0.contains("Wolf") }
                    }
                ) {
                    try fixture.migrate(to: MigrationModels.version2, mapping: mapping)
                }
                try requireEqual(try fixture.version1Content(), before, "the store's content")
            },
            ConformanceCase(
                "migration: a mapping model naming a policy that is not registered fails, and the store stays as it was"
            ) { harness in
                let fixture = try MigrationFixture(harness, people: 5)
                let before = try fixture.version1Content()
                let inferred = try MappingModel.inferredMappingModel(
                    forSourceModel: MigrationModels.version1, destinationModel: MigrationModels.version2)
                let mapping = try MappingModel(
                    entityMappings: inferred.entityMappings.map { mapping in
                        var copy = mapping
                        copy.entityMigrationPolicyClassName = "NoSuchModule.NoSuchPolicy"
                        return copy
                    })
                try requireThrows("the migration", matches: { ($0 as? MigrationError)?.code == .policy }) {
                    try fixture.migrate(to: MigrationModels.version2, mapping: mapping)
                }
                try requireEqual(try fixture.version1Content(), before, "the store's content")
            },
        ]
    }

    static var migrationWiringCases: [ConformanceCase] {
        [
            ConformanceCase(
                "migration: addPersistentStore migrates automatically when asked to, and refuses a changed model otherwise"
            ) { harness in
                let fixture = try MigrationFixture(harness, people: 15)
                let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version2)
                try requireThrows(
                    "attaching without migration",
                    matches: { ($0 as? StoreError)?.code == .modelMismatch || ($0 as? StoreError)?.code == .corrupt }
                ) {
                    try coordinator.addPersistentStore(
                        type: harness.storeType, at: fixture.url, options: harness.options)
                }
                var noInference = harness.options
                noInference.shouldMigrateStoreAutomatically = true
                try requireThrows(
                    "migrating without inference or a mapping",
                    matches: { ($0 as? MigrationError)?.code == .mappingModelNotFound }
                ) {
                    try coordinator.addPersistentStore(type: harness.storeType, at: fixture.url, options: noInference)
                }
                var options = harness.options
                options.shouldMigrateStoreAutomatically = true
                options.shouldInferMappingModelAutomatically = true
                let store = try coordinator.addPersistentStore(
                    type: harness.storeType, at: fixture.url, options: options)
                let problems = try MigrationModels.differences(
                    ManagedObjectContext(coordinator: coordinator), people: 15)
                try require(problems.isEmpty, "the migrated rows: \(problems.prefix(3))")
                try coordinator.remove(store)
            },
            ConformanceCase(
                "migration: a store migrated to a newer model refuses the older model with olderModel, migrating or not"
            ) { harness in
                let fixture = try MigrationFixture(harness, people: 5)
                try fixture.migrate(to: MigrationModels.version2)
                let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version1)
                try requireThrows("attaching with version 1", matches: { ($0 as? MigrationError)?.code == .olderModel })
                {
                    try coordinator.addPersistentStore(
                        type: harness.storeType, at: fixture.url, options: harness.options)
                }
                var options = harness.options
                options.shouldMigrateStoreAutomatically = true
                options.shouldInferMappingModelAutomatically = true
                try requireThrows(
                    "migrating back to version 1", matches: { ($0 as? MigrationError)?.code == .olderModel }
                ) {
                    try coordinator.addPersistentStore(type: harness.storeType, at: fixture.url, options: options)
                }
            },
            ConformanceCase(
                "migration: replacePersistentStore puts one store in place of another and destroyPersistentStore removes it"
            ) { harness in
                let fixture = try MigrationFixture(harness, people: 8)
                let other = try MigrationFixture(harness, people: 3)
                let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version1)
                try coordinator.replacePersistentStore(
                    at: fixture.url, withPersistentStoreFrom: other.url, type: harness.storeType,
                    options: harness.options)
                let count = try fixture.open(MigrationModels.version1) { context, _ in
                    try context.count(for: FetchRequest(entityName: "Person"))
                }
                try requireEqual(count, 3, "people in the replaced store")
                try coordinator.destroyPersistentStore(
                    at: fixture.url, type: harness.storeType, options: harness.options)
                try require(
                    try harness.storeType.factory.metadata(at: fixture.url, options: StoreOptions(isReadOnly: true))
                        == nil, "the store is gone")
            },
            ConformanceCase(
                "migration: migratePersistentStore copies an attached store to a new location with its identifier and keys"
            ) { harness in
                let fixture = try MigrationFixture(harness, people: 8)
                let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version1)
                let store = try coordinator.addPersistentStore(
                    type: harness.storeType, at: fixture.url, options: harness.options)
                let before = try MigrationFixture.content(ManagedObjectContext(coordinator: coordinator))
                let folder = fixture.directory.url.appendingPathComponent("copy-\(UUID().uuidString.prefix(8))")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let target = harness.location(folder) ?? folder.appendingPathComponent("store")
                let copy = try coordinator.migratePersistentStore(
                    store, to: target, options: harness.options, type: harness.storeType)
                try requireEqual(copy.identifier, store.identifier, "the copy's identifier")
                try requireEqual(coordinator.persistentStores.count, 1, "only the copy is attached")
                try requireEqual(
                    try MigrationFixture.content(ManagedObjectContext(coordinator: coordinator)), before,
                    "the copy's content and URIs")
                try coordinator.remove(copy)
            },
        ]
    }
}
