import Foundation
import Strata
import StrataTesting
import StrataTools

/// What every damaged store goes through: the `strata` commands `inspect`, `export` and `validate`
/// (the library calls behind them), then open, fetch, fire faults, walk relationships, update,
/// insert, delete, save and reopen. Each stage must give a result or a typed error.
struct StoreExercise {
    /// The driver.
    var type: StoreType
    /// The location scheme of the tools.
    var scheme: KnownDriver
    /// The model the store is opened with.
    var model: ManagedObjectModel
    /// Whether the store is opened read-only (Apple stores with an inferred model).
    var readOnly = false

    /// Runs every stage on the store at `url` and names the outcome: the tools' results, then the
    /// first stage of the object graph that failed (`open:corrupt`), or `saved`.
    func run(_ url: URL, random: inout SeededGenerator) throws -> String {
        var outcome: [String] = []
        outcome.append(try tools(url))
        outcome.append(try objects(url, random: &random))
        return outcome.joined(separator: " ")
    }

    /// `strata inspect`, `export` and `validate`.
    func tools(_ url: URL) throws -> String {
        let location = StoreLocation(scheme: scheme, url: url)
        var results: [String] = []
        results.append(try Outcome.stage("inspect") { _ = try StoreInspector.inspect(location).lines } ?? "inspect:ok")
        results.append(
            try Outcome.stage("export") { try InterchangeExporter.export(from: location) { _ in } } ?? "export:ok")
        var problems = 0
        results.append(
            try Outcome.stage("validate") { problems = try StoreValidator.validate(location).count }
                ?? (problems == 0 ? "validate:clean" : "validate:problems"))
        return results.joined(separator: " ")
    }

    /// The object graph: the first failing stage, or `saved` / `unsaved` (nothing to save).
    func objects(_ url: URL, random: inout SeededGenerator) throws -> String {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, rowCacheLimit: 1_000)
        var store: PersistentStore?
        if let failed = try Outcome.stage(
            "open",
            {
                store = try coordinator.addPersistentStore(
                    type: type, at: url, options: StoreOptions(isReadOnly: readOnly, timeout: 1))
            })
        {
            return failed
        }
        defer {
            if let store { try? coordinator.remove(store) }  // closing a store of a finished case; its result is in
        }
        let context = ManagedObjectContext(coordinator: coordinator)
        var fetched: [ManagedObject] = []
        var firstFailure: String?
        for entity in model.entities {
            let failed = try Outcome.stage("fetch") {
                fetched += try context.fetch(FetchRequest(entityName: entity.name))
                _ = try context.count(for: FetchRequest(entityName: entity.name))
                if let attribute = entity.attributes.first(where: {
                    !$0.isTransient && $0.type != .transformable && $0.type != .binaryData
                }) {
                    var sorted = FetchRequest(
                        entityName: entity.name, predicate: try FetchPredicate(format: "%K != nil", attribute.name),
                        sortKeys: [SortKey(attribute.name)])
                    sorted.fetchLimit = 5
                    _ = try context.fetch(sorted)
                }
            }
            firstFailure = firstFailure ?? failed
        }
        // Faults: a second context sees every fetched object as a fault and fires it.
        let faults = ManagedObjectContext(coordinator: coordinator)
        let ids = fetched.prefix(300).map(\.objectID)
        if let failed = try Outcome.stage(
            "fault",
            {
                for id in ids {
                    let object = faults.object(with: id)
                    for property in object.entity.properties {
                        _ = try object.storeValue(forKey: property.name)
                        if property.attribute != nil { _ = object.value(forKey: property.name) }
                    }
                }
            })
        {
            firstFailure = firstFailure ?? failed
        }
        if let failed = try Outcome.stage(
            "walk",
            {
                for id in ids.prefix(100) {
                    let object = faults.object(with: id)
                    for relationship in object.entity.relationships {
                        let related =
                            relationship.isToMany
                            ? object.objects(forKey: relationship.name)
                            : object.object(forKey: relationship.name).map { [$0] } ?? []
                        for destination in related.prefix(5) {
                            if let first = destination.entity.properties.first {
                                _ = try destination.storeValue(forKey: first.name)
                            }
                        }
                    }
                }
            })
        {
            firstFailure = firstFailure ?? failed
        }
        if let failed = try Outcome.stage("change", { try change(context, fetched, random: &random) }) {
            return firstFailure.map { "\($0) \(failed)" } ?? failed
        }
        guard context.hasChanges else { return firstFailure ?? "unsaved" }
        if let failed = try Outcome.stage("save", { try context.save() }) {
            return firstFailure.map { "\($0) \(failed)" } ?? failed
        }
        if let store { try coordinator.remove(store) }
        store = nil
        let reopened = PersistentStoreCoordinator(managedObjectModel: model, rowCacheLimit: 1_000)
        if let failed = try Outcome.stage(
            "reopen",
            {
                let again = try reopened.addPersistentStore(
                    type: type, at: url, options: StoreOptions(isReadOnly: true, timeout: 1))
                defer { try? reopened.remove(again) }  // read-only: closing changes nothing
                let check = ManagedObjectContext(coordinator: reopened)
                for entity in model.entities { _ = try check.count(for: FetchRequest(entityName: entity.name)) }
            })
        {
            return firstFailure.map { "\($0) \(failed)" } ?? failed
        }
        return firstFailure.map { "\($0) saved" } ?? "saved"
    }

    /// Updates a few fetched objects, inserts two, relates them to fetched ones and deletes one.
    func change(_ context: ManagedObjectContext, _ fetched: [ManagedObject], random: inout SeededGenerator) throws {
        guard !readOnly else { return }
        let live = fetched.filter { !$0.isDeleted }
        for _ in 0..<min(3, live.count) {
            let object = live[Int.random(in: 0..<live.count, using: &random)]
            let attributes = object.entity.attributes.filter { !$0.isTransient }
            guard !attributes.isEmpty else { continue }
            let attribute = attributes[Int.random(in: 0..<attributes.count, using: &random)]
            try object.setConvertedValue(Self.value(for: attribute, &random), forKey: attribute.name)
        }
        let concrete = model.entities.filter { !$0.isAbstract }
        for _ in 0..<2 where !concrete.isEmpty {
            let entity = concrete[Int.random(in: 0..<concrete.count, using: &random)]
            let object = try context.insertNewObject(forEntityName: entity.name)
            for attribute in entity.attributes
            where !attribute.isTransient && (!attribute.isOptional || Bool.random(using: &random)) {
                try object.setConvertedValue(Self.value(for: attribute, &random), forKey: attribute.name)
            }
            for relationship in entity.relationships where !relationship.isToMany {
                let targets = live.filter {
                    $0.entity.name == relationship.destinationEntityName
                        || $0.entity.isKind(of: relationship.destinationEntityName, in: model)
                }
                if let target = targets.first { try object.setConvertedValue(target, forKey: relationship.name) }
            }
        }
        if let victim = live.randomElement(using: &random) { context.delete(victim) }
    }

    /// A valid random value for an attribute.
    static func value(for attribute: AttributeDescription, _ random: inout SeededGenerator) -> Any? {
        let unique = "fuzz-\(random.next() % 1_000_000)"
        switch attribute.type {
        case .integer16: return Int16.random(in: 0...1_000, using: &random)
        case .integer32: return Int32.random(in: -5_000...5_000, using: &random)
        case .integer64: return Int64.random(in: Int64.min...Int64.max, using: &random)
        case .decimal: return Decimal(string: "\(random.next() % 10_000).5")
        case .double: return Double.random(in: -1e6...1e6, using: &random)
        case .float: return Float.random(in: -1e3...1e3, using: &random)
        case .string: return unique
        case .boolean: return Bool.random(using: &random)
        case .date: return Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e9, using: &random))
        case .binaryData: return Data(unique.utf8)
        case .uuid:
            return UUID(uuid: withUnsafeBytes(of: (random.next(), random.next())) { raw in raw.load(as: uuid_t.self) })
        case .uri: return URL(string: "https://example.com/\(unique)")
        case .transformable: return attribute.valueTransformerName == nil ? nil : [unique]
        default: return nil
        }
    }
}

extension EntityDescription {
    /// Whether this entity is `name` or one of its subentities.
    func isKind(of name: String, in model: ManagedObjectModel) -> Bool {
        var current: EntityDescription? = self
        while let entity = current {
            if entity.name == name { return true }
            current = entity.superentityName.flatMap { model.entity(named: $0) }
        }
        return false
    }
}
