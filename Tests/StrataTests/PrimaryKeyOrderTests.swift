import Foundation
import StrataTesting
import Testing

@testable import Strata

/// ``PrimaryKeyOrder`` gives the order a comparison sort gives: placed by rank where keys are
/// dense, sorted where they are not or their span overflows.
@Suite("Primary key order of an atomic store's rows")
struct PrimaryKeyOrderTests {
    static func rows(_ keys: [Int64]) -> [RowSnapshot] {
        keys.map { RowSnapshot(id: RowID(entity: 3, primaryKey: $0), version: 1, values: [.integer($0)]) }
    }

    static func check(_ keys: [Int64], _ label: String) {
        var rows = Self.rows(keys)
        PrimaryKeyOrder.order(&rows)
        #expect(rows.map(\.id.primaryKey) == keys.sorted(), "\(label)")
        // Values travel with their rows.
        #expect(rows.allSatisfy { $0.values == [.integer($0.id.primaryKey)] }, "\(label)")
    }

    @Test("random dense and sparse key sets, in random order, come out in key order")
    func randomKeySets() {
        let seed: UInt64 = 0x0DE5_0DE5
        let rounds = 300
        print("primary key order: seed \(seed), \(rounds) key sets")
        var generator = SeededGenerator(seed: seed)
        for round in 0..<rounds {
            let count = Int.random(in: 0...2_000, using: &generator)
            // Spans from every key present to far sparser than the limit for placing by rank.
            let spread = [1, 2, 4, 5, 1_000][round % 5]
            let base = Int64.random(in: -1_000...1_000_000, using: &generator)
            var keys = Set<Int64>()
            while keys.count < count {
                keys.insert(base + Int64.random(in: 0..<Int64(max(1, count * spread)), using: &generator))
            }
            Self.check(Array(keys).shuffled(using: &generator), "round \(round), \(count) keys, spread \(spread)")
        }
    }

    @Test("edges: no row, one row, keys at both ends of Int64 (span overflows), keys already in order or reversed")
    func edges() {
        Self.check([], "empty")
        Self.check([42], "one")
        Self.check([.max, .min, 0], "span overflows")
        Self.check([.max, .max - 1, .max - 2], "top of the range")
        Self.check(Array(1...5_000), "in order")
        Self.check(Array((1...5_000).reversed()), "reversed")
    }

    @Test(
        "an in-memory store's fetch hands rows over in row-ID order, every entity of a hierarchy after the one before")
    func fetchInRowIDOrder() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(coordinator: coordinator)
        var generator = SeededGenerator(seed: 0x51DE)
        for index in 0..<600 {
            let entity = ["Car", "SportsCar", "Truck"][Int.random(in: 0..<3, using: &generator)]
            let vehicle = try context.insertNewObject(forEntityName: entity)
            vehicle["name"] = "v\(index)"
        }
        try context.save()
        // Deleting every third leaves gaps in the keys.
        let all = try context.fetch(FetchRequest(entityName: "Vehicle"))
        for (index, vehicle) in all.enumerated() where index % 3 == 0 { context.delete(vehicle) }
        try context.save()
        let store = coordinator.persistentStores[0]
        let vehicle = try #require(ConformanceModel.model.entity(named: "Vehicle"))
        let rows = try store.driver.fetch(StoreFetch(entity: vehicle)).rows
        #expect(rows.count == 400)
        #expect(rows.map(\.id) == rows.map(\.id).sorted(), "row-ID order: entity number, then key")
    }
}
