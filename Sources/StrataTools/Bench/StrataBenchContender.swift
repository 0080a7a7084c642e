import Foundation
import Strata

/// Strata on one driver, used the way an application would: a coordinator, contexts, managed
/// objects read and written by key, one `save()` per transaction.
///
/// Each workload starts with a new context, so nothing is served from objects registered by an
/// earlier workload. W3-cold and each W7 walk empty the store's part of the row cache first
/// (untimed, in ``prepareColdLookups()``), so their rows come from the driver; W3-warm then finds
/// them in the row cache.
///
/// Thread safety: not `Sendable`; the runner uses it from one thread.
public final class StrataBenchContender: BenchContender {
    /// The driver measured.
    public let kind: KnownDriver
    private let type: StoreType
    private let model: ManagedObjectModel
    private var coordinator: PersistentStoreCoordinator?
    private var store: PersistentStore?
    /// Object IDs by row id − 1, recorded after W1's save.
    private var objectIDs: [ManagedObjectID] = []
    /// W8: the context and objects loaded by `loadForChange`.
    private var changeContext: ManagedObjectContext?
    private var changeObjects: [ManagedObject] = []
    /// The open store's location (a server's store is removed when it closes).
    private var location: URL?

    /// The durability the store is opened with, when not the driver kind's (``KnownDriver/storeOptions``).
    public let durability: BenchDurability?

    /// Creates the contender, or `nil` when `kind`'s driver is not linked into this build.
    ///
    /// - Parameter durability: store options over ``KnownDriver/storeOptions``; the contender is
    ///   then named `strata-<driver>-<name>` and reports the durability's settings.
    public init?(kind: KnownDriver, durability: BenchDurability? = nil) throws {
        guard let type = kind.storeType, kind.unavailableReason == nil else { return nil }
        self.kind = kind
        self.type = type
        self.durability = durability
        self.model = try BenchModel.make()
    }

    public var id: String { "strata-\(kind.rawValue)" + (durability.map { "-\($0.name)" } ?? "") }
    public var engine: String { kind.engine }
    public var settings: String { durability?.settings ?? kind.settings }

    public func open(in directory: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let url = kind.location(in: directory)
        location = url
        store = try coordinator.addPersistentStore(type: type, at: url, options: kind.storeOptions(durability))
        self.coordinator = coordinator
        objectIDs = []
    }

    public func close() throws {
        changeContext = nil
        changeObjects = []
        if let store, let coordinator { try coordinator.remove(store) }
        store = nil
        coordinator = nil
        try kind.removeStore(at: location)
        location = nil
    }

    private func context() throws -> ManagedObjectContext {
        guard let coordinator else { throw BenchError("\(id): no store is open") }
        return ManagedObjectContext(coordinator: coordinator)
    }

    private func emptyRowCache() {
        if let coordinator, let store { coordinator.rowCache.removeAll(in: ObjectIdentifier(store)) }
    }

    public func insert(_ rows: ArraySlice<BenchRow>) throws -> BenchOutcome {
        let context = try context()
        var objects: [ManagedObject] = []
        objects.reserveCapacity(rows.count)
        for row in rows {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["id"] = row.id
            item["name"] = row.name
            item["email"] = row.email
            item["age"] = row.age
            item["score"] = row.score
            item["created"] = row.created
            objects.append(item)
        }
        try context.save()
        objectIDs = objects.map(\.objectID)
        return BenchOutcome(rows: objects.count)
    }

    /// Reads every attribute with the typed subscript (`let id: Int64? = item["id"]`), as W1
    /// writes them and as the accessors `strata generate` writes read them. The `Any?` spelling,
    /// `item["id"] as? Int`, costs a runtime cast per value (docs/benchmarks.md measures both).
    public static func checksum(_ item: ManagedObject) -> Int64 {
        let id: Int64? = item["id"]
        let name: String? = item["name"]
        let email: String? = item["email"]
        let age: Int32? = item["age"]
        let score: Double? = item["score"]
        let created: Date? = item["created"]
        return BenchChecksum.row(
            id: id ?? 0, nameBytes: name?.utf8.count ?? 0, emailBytes: email?.utf8.count ?? 0, age: Int64(age ?? 0),
            score: score ?? 0, created: created?.timeIntervalSinceReferenceDate ?? 0)
    }

    /// Objects hold their context weakly, so callers keep the returned context while reading.
    private func fetchItems(
        _ predicate: FetchPredicate? = nil, sortedBy sort: [SortKey] = []
    ) throws -> (ManagedObjectContext, [ManagedObject]) {
        let context = try context()
        var request = FetchRequest(entityName: "Item", predicate: predicate, sortKeys: sort)
        request.returnsObjectsAsFaults = false
        return (context, try context.fetch(request))
    }

    public func fetchAll() throws -> BenchOutcome {
        let (context, items) = try fetchItems()
        defer { withExtendedLifetime(context) {} }
        var sum: Int64 = 0
        for item in items { sum = sum &+ Self.checksum(item) }
        return BenchOutcome(rows: items.count, checksum: sum)
    }

    public func fetchAllReadingAny() throws -> BenchOutcome? {
        let (context, items) = try fetchItems()
        defer { withExtendedLifetime(context) {} }
        var sum: Int64 = 0
        for item in items {
            let created = item["created"] as? Date
            sum =
                sum
                &+ BenchChecksum.row(
                    id: Int64(item["id"] as? Int ?? 0), nameBytes: (item["name"] as? String)?.utf8.count ?? 0,
                    emailBytes: (item["email"] as? String)?.utf8.count ?? 0, age: Int64(item["age"] as? Int ?? 0),
                    score: item["score"] as? Double ?? 0, created: created?.timeIntervalSinceReferenceDate ?? 0)
        }
        return BenchOutcome(rows: items.count, checksum: sum)
    }

    /// Empties the row cache of the store's rows, so the cold pass goes to the driver.
    public func prepareColdLookups() throws { emptyRowCache() }

    public func lookUp(_ ids: [Int64], warm: Bool) throws -> BenchOutcome {
        let context = try context()
        var sum: Int64 = 0
        for id in ids {
            let item = try context.existingObject(with: objectIDs[Int(id) - 1])
            sum = sum &+ Self.checksum(item)
        }
        return BenchOutcome(rows: ids.count, checksum: sum)
    }

    public func fetchFiltered(ages: ClosedRange<Int32>) throws -> BenchOutcome {
        let predicate = try FetchPredicate(format: "age BETWEEN {%d, %d}", Int(ages.lowerBound), Int(ages.upperBound))
        let (context, items) = try fetchItems(predicate, sortedBy: [SortKey("name")])
        defer { withExtendedLifetime(context) {} }
        var sum: Int64 = 0
        for (i, item) in items.enumerated() {
            sum = sum &+ Self.checksum(item) &+ BenchChecksum.ordered(position: i, id: item["id"] ?? 0)
        }
        return BenchOutcome(rows: items.count, checksum: sum)
    }

    public func updateAll() throws -> BenchOutcome {
        let context = try context()
        var request = FetchRequest(entityName: "Item")
        request.returnsObjectsAsFaults = false
        let items = try context.fetch(request)
        for item in items { item["score"] = (item["score"] ?? 0.0) + 1 }
        try context.save()
        return BenchOutcome(rows: items.count)
    }

    public func deleteAll() throws -> BenchOutcome {
        let context = try context()
        let items = try context.fetch(FetchRequest(entityName: "Item"))
        for item in items { context.delete(item) }
        try context.save()
        return BenchOutcome(rows: items.count)
    }

    public func loadForChange(_ ids: [Int64]) throws {
        let context = try context()
        changeObjects = try ids.map { try context.existingObject(with: objectIDs[Int($0) - 1]) }
        changeContext = context
    }

    public func saveChanged() throws -> BenchOutcome {
        guard let context = changeContext else { throw BenchError("\(id): W8 ran without loadForChange") }
        for item in changeObjects { item["age"] = (item["age"] ?? Int32(0)) + 1 }
        try context.save()
        return BenchOutcome(rows: changeObjects.count)
    }

    public func insertGraph(_ dataset: BenchDataset) throws {
        let context = try context()
        var value: Int64 = 0
        for p in 1...max(dataset.parents, 1) where dataset.parents > 0 {
            let parent = try context.insertNewObject(forEntityName: "Parent")
            parent["number"] = Int64(p)
            parent["name"] = "parent-\(p)"
            for _ in 0..<dataset.childrenPerParent {
                value += 1
                let child = try context.insertNewObject(forEntityName: "Child")
                child["value"] = value
                child["name"] = "child-\(value)"
                child["parent"] = parent
            }
        }
        try context.save()
    }

    public func walkGraph(prefetch: Bool) throws -> BenchOutcome {
        var request = FetchRequest(entityName: "Parent")
        request.returnsObjectsAsFaults = false
        if prefetch { request.relationshipKeyPathsForPrefetching = ["children"] }
        let context = try context()
        defer { withExtendedLifetime(context) {} }
        let parents = try context.fetch(request)
        var sum: Int64 = 0
        var count = 0
        for parent in parents {
            let number: Int64 = parent["number"] ?? 0
            for child in parent.objects(forKey: "children") {
                sum = sum &+ BenchChecksum.child(parent: number, value: child["value"] ?? 0)
                count += 1
            }
        }
        return BenchOutcome(rows: count, checksum: sum)
    }
}
