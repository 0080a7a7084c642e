import Foundation
import StrataTesting
import Synchronization
import Testing

@testable import Strata

@Suite("Row table")
struct RowTableTests {
    let stores = [ObjectIdentifier(NSObject()), ObjectIdentifier(NSObject())]

    func key(_ store: Int, _ entity: Int32, _ pk: Int64) -> RowCache.Key {
        RowCache.Key(store: stores[store], row: RowID(entity: entity, primaryKey: pk))
    }

    /// Every key and value of the table, as a dictionary; fails when iteration visits a key twice.
    func contents(_ table: RowTable<Int>) -> [RowCache.Key: Int] {
        var seen: [RowCache.Key: Int] = [:]
        table.forEachEntry { key, value in
            #expect(seen.updateValue(value, forKey: key) == nil, "key \(key) visited twice")
        }
        return seen
    }

    @Test("random runs, outliers, removals and whole-store removal agree with a dictionary at every step")
    func agreesWithDictionary() {
        var rng = SeededGenerator(seed: 0x7AB1E)
        var table = RowTable<Int>()
        var model: [RowCache.Key: Int] = [:]
        for step in 0..<6_000 {
            let store = Int.random(in: 0...1, using: &rng)
            let entity = Int32.random(in: 0...3, using: &rng)
            // Mostly a dense band near the start, sometimes far away, negative or at the ends of Int64.
            let pk: Int64
            switch Int.random(in: 0..<20, using: &rng) {
            case 0: pk = Int64.random(in: 1_000_000...9_000_000_000, using: &rng)
            case 1: pk = -Int64.random(in: 1...5_000, using: &rng)
            case 2: pk = [Int64.max, Int64.min, Int64.max - 1, Int64.min + 1][Int.random(in: 0...3, using: &rng)]
            default: pk = Int64.random(in: 0...3_000, using: &rng)
            }
            let k = key(store, entity, pk)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0...5:
                #expect(table.updateValue(step, forKey: k) == model.updateValue(step, forKey: k))
            case 6:
                let changed = table.withExistingValue(forKey: k) { value -> Int in
                    value += 1
                    return value
                }
                if let old = model[k] { model[k] = old + 1 }
                #expect(changed == model[k])
            case 7:
                let isNew = table.withValue(forKey: k, default: -step) { value, isNew in
                    value &+= 7
                    return isNew
                }
                #expect(isNew == (model[k] == nil))
                model[k] = (model[k] ?? -step) &+ 7
            case 8:
                // Reservations change where keys live, never what the table holds.
                let span = Int64.random(in: 0...5_000, using: &rng)
                if pk < Int64.max - span {
                    table.reserve(
                        store: stores[store], entity: entity, keys: pk...(pk + span),
                        count: Int.random(in: 1...3_000, using: &rng))
                }
            default:
                #expect(table.removeValue(forKey: k) == model.removeValue(forKey: k))
            }
            if step % 1_500 == 1_499 {
                table.removeAll(in: stores[0])
                model = model.filter { $0.key.store != stores[0] }
            }
            #expect(table.count == model.count)
            if step % 250 == 0 {
                #expect(contents(table) == model)
                for (k, v) in model { #expect(table[k] == v) }
            }
        }
        #expect(contents(table) == model)
        var sum = 0
        table.forEachValue { sum &+= $0 }
        #expect(sum == model.values.reduce(0, &+))
    }

    @Test(
        "keys that arrive in order land in a lane, and a lane grows downward to take lower keys from the overflow table"
    )
    func lanesCoverRuns() {
        var table = RowTable<Int>()
        // 5,000 keys counting down from 5,000: the lane starts at the first and must grow down.
        for pk in stride(from: Int64(5_000), through: 1, by: -1) { table.updateValue(Int(pk), forKey: key(0, 1, pk)) }
        // A far key goes to the overflow table; keys between then make the lane grow over it.
        table.updateValue(-1, forKey: key(0, 1, 30_000))
        for pk in Int64(5_001)...Int64(29_999) { table.updateValue(Int(pk), forKey: key(0, 1, pk)) }
        #expect(table.count == 30_000)
        #expect(table[key(0, 1, 30_000)] == -1)
        var previous: Int64 = 0
        var inOrder = true
        table.forEachEntry { key, _ in
            // Only keys in a lane come back in key order; one left in the overflow table would come last.
            if key.row.primaryKey <= previous { inOrder = false }
            previous = key.row.primaryKey
        }
        #expect(inOrder)
        #expect(table.removeValue(forKey: key(0, 1, 30_000)) == -1)
        #expect(table[key(0, 1, 30_000)] == nil && table.count == 29_999)
    }

    @Test("updateValues of runs, outliers, repeats and keys at the ends of Int64 agrees with updateValue one by one")
    func bulkAgreesWithSingleUpdates() {
        let seed: UInt64 = 0xB01C
        var rng = SeededGenerator(seed: seed)
        var table = RowTable<Int>()
        var model: [RowCache.Key: Int] = [:]
        var next = 0
        for batch in 0..<400 {
            let store = Int.random(in: 0...1, using: &rng)
            let entity = Int32.random(in: 0...2, using: &rng)
            let start = Int64.random(in: -2_000...50_000, using: &rng)
            var keys: [Int64] = []
            for position in 0..<Int.random(in: 0...300, using: &rng) {
                switch Int.random(in: 0..<40, using: &rng) {
                case 0: keys.append(Int64.random(in: 1_000_000...9_000_000_000, using: &rng))
                case 1:
                    keys.append(
                        [Int64.max, Int64.min, Int64.max - 1, Int64.min / 2][Int.random(in: 0...3, using: &rng)])
                case 2: keys.append(keys.randomElement(using: &rng) ?? start)
                default: keys.append(start + Int64(position))
                }
            }
            let values = keys.map { _ in
                next += 1
                return next
            }
            var replaced: [Int] = []
            table.updateValues(store: stores[store], entity: entity, keys: keys, values: values) { replaced.append($0) }
            var expected: [Int] = []
            for (pk, value) in zip(keys, values) {
                if let old = model.updateValue(value, forKey: key(store, entity, pk)) { expected.append(old) }
            }
            #expect(replaced.sorted() == expected.sorted(), "seed \(seed), batch \(batch): replaced values")
            #expect(table.count == model.count, "seed \(seed), batch \(batch): count")
        }
        #expect(contents(table) == model, "seed \(seed): contents after 400 batches")
        for (k, value) in model { #expect(table[k] == value) }
    }

    @Test("a key no lane can hold, stored before its entity has a lane, is still found after one is made")
    func overflowBeforeLane() {
        var table = RowTable<Int>()
        table.updateValue(1, forKey: key(0, 3, Int64.max))
        table.updateValue(2, forKey: key(0, 3, 10))
        #expect(table[key(0, 3, Int64.max)] == 1)
        #expect(table.withExistingValue(forKey: key(0, 3, Int64.max)) { $0 } == 1)
        #expect(table.removeValue(forKey: key(0, 3, 10)) == 2)
        #expect(table[key(0, 3, Int64.max)] == 1 && table.count == 1)
        #expect(table.removeValue(forKey: key(0, 3, Int64.max)) == 1)
        #expect(table.isEmpty)
    }

    @Test(
        "a reserved range takes its keys in one lane; a range too sparse for its count is refused and its keys still land"
    )
    func reservations() {
        var table = RowTable<Int>()
        table.reserve(store: stores[0], entity: 1, keys: 1_001...101_000, count: 100_000)
        for pk in Int64(1_001)...101_000 { table.updateValue(Int(pk), forKey: key(0, 1, pk)) }
        var previous: Int64 = 0
        var inOrder = true
        table.forEachEntry { key, _ in
            if key.row.primaryKey <= previous { inOrder = false }
            previous = key.row.primaryKey
        }
        #expect(inOrder && table.count == 100_000)
        // Two keys a billion apart: T3 refuses the lane, and the far key goes to the overflow table.
        table.reserve(store: stores[1], entity: 1, keys: 1...1_000_000_000, count: 2)
        table.updateValue(-1, forKey: key(1, 1, 1))
        table.updateValue(-2, forKey: key(1, 1, 1_000_000_000))
        #expect(table[key(1, 1, 1)] == -1 && table[key(1, 1, 1_000_000_000)] == -2 && table.count == 100_002)
    }

    @Test("drain hands over every value once, lanes and overflow table alike, and leaves the table empty")
    func drain() {
        var table = RowTable<Int>()
        for pk in Int64(1)...300 { table.updateValue(Int(pk), forKey: key(0, 1, pk)) }
        table.updateValue(1_000, forKey: key(1, 2, Int64.max))
        var seen: [Int] = []
        table.drain { seen.append($0) }
        #expect(seen.sorted() == Array(1...300) + [1_000])
        #expect(table.isEmpty && table[key(0, 1, 5)] == nil)
    }

    @Test("lanes growing down and up move their objects: each stays alive while held and is freed once")
    func growingKeepsObjects() {
        final class Counted {
            static let freed = Mutex(0)
            let value: Int64
            init(_ value: Int64) { self.value = value }
            deinit { Counted.freed.withLock { $0 += 1 } }
        }
        let seed: UInt64 = 21
        var generator = SeededGenerator(seed: seed)
        var table = RowTable<Counted>()
        var expected: [RowCache.Key: Int64] = [:]
        // Keys in no order within a range a lane may cover: the lane grows below and above.
        for _ in 0..<3_000 {
            let pk = Int64.random(in: 1...6_000, using: &generator)
            table.updateValue(Counted(pk), forKey: key(0, 1, pk))
            expected[key(0, 1, pk)] = pk
        }
        // Objects replaced by the same keys are freed; the rest are alive and in place.
        #expect(Counted.freed.withLock { $0 } == 3_000 - expected.count, "seed \(seed)")
        for (key, pk) in expected { #expect(table[key]?.value == pk, "seed \(seed), key \(key)") }
        table.removeAll()
        #expect(Counted.freed.withLock { $0 } == 3_000, "seed \(seed): every object freed once")
    }

    @Test("drainPrefetching hands over every object once, skipping empty slots, and releases each as it goes")
    func drainPrefetching() {
        final class Box {
            let value: Int
            init(_ value: Int) { self.value = value }
        }
        var table = RowTable<Box>()
        // Gaps in the lane (empty slots near the end too, where the look-ahead runs off the lane).
        for pk in Int64(1)...500 where pk % 7 != 0 && pk != 499 {
            table.updateValue(Box(Int(pk)), forKey: key(0, 1, pk))
        }
        table.updateValue(Box(-1), forKey: key(1, 2, Int64.max))
        weak var first: Box?
        first = table[key(0, 1, 1)]
        var seen: [Int] = []
        var firstGoneBeforeEnd = false
        table.drainPrefetching { box in
            seen.append(box.value)
            // The table's reference is dropped right after its object's turn, not at the end.
            if seen.count == 10 { firstGoneBeforeEnd = first == nil }
        }
        #expect(seen.sorted() == [-1] + (1...500).filter { $0 % 7 != 0 && $0 != 499 })
        #expect(firstGoneBeforeEnd)
        #expect(table.isEmpty && table[key(0, 1, 5)] == nil)
    }

    @Test("mutateAll changes every value once, in lanes and the overflow table")
    func mutateAll() {
        var table = RowTable<Int>()
        for pk in Int64(1)...100 { table.updateValue(1, forKey: key(0, 2, pk)) }
        table.updateValue(1, forKey: key(1, 2, Int64.max))
        table.mutateAll { _, value in value += 1 }
        var total = 0
        table.forEachValue { total += $0 }
        #expect(total == 202)
    }

    @Test(
        "a batch too scattered for its lane goes to the overflow table without growing the lane, the lane grows again after it, and a dense batch brings the keys back (T4)"
    )
    func scatteredBatchHoldsLane() {
        var table = RowTable<Int>()
        let store = stores[0]
        table.reserve(store: store, entity: 1, keys: 1...100, count: 100)
        for pk in Int64(1)...100 { table.updateValue(Int(pk), forKey: key(0, 1, pk)) }
        #expect(table.overflowCount == 0)
        // 1,000 keys 1,000 apart, the nearest last: T3 refuses a lane over a million keys for
        // 1,100. Without the hold, the nearest of them (..., 2,007, 1,007) would grow the lane one
        // step at a time, the last of the batch too.
        let scattered = (1...1_000).map { Int64($0) * 1_000 + 7 }
        table.reserve(store: store, entity: 1, keys: scattered.first!...scattered.last!, count: scattered.count)
        for pk in scattered.reversed() { table.updateValue(Int(pk), forKey: key(0, 1, pk)) }
        #expect(table.overflowCount == scattered.count)
        #expect(table.count == 1_100)
        for pk in scattered { #expect(table[key(0, 1, pk)] == Int(pk)) }
        // The batch is in, so the hold is over: a key next to the lane grows it again.
        table.updateValue(150, forKey: key(0, 1, 150))
        #expect(table.overflowCount == scattered.count)
        #expect(table[key(0, 1, 150)] == 150)
        // A batch dense enough covers everything and takes the scattered keys into the lane.
        table.reserve(store: store, entity: 1, keys: 1...1_000_007, count: 1_000_000)
        #expect(table.overflowCount == 0)
        var previous: Int64 = 0
        var inOrder = true
        table.forEachEntry { key, value in
            if key.row.primaryKey <= previous || Int64(value) != key.row.primaryKey { inOrder = false }
            previous = key.row.primaryKey
        }
        #expect(inOrder)
        #expect(table.count == 1_101)
    }

    @Test(
        "100,000 keys stored in order in reserved parts of 256 leave their lane under a tenth empty (doubling left a quarter)"
    )
    func laneGrowth() {
        var table = RowTable<Int>()
        let store = stores[0]
        let rows: Int64 = 100_000
        var first: Int64 = 1
        while first <= rows {
            let last = min(first + 255, rows)
            table.reserve(store: store, entity: 1, keys: first...last, count: Int(last - first + 1), doubling: true)
            for pk in first...last { table.updateValue(Int(pk), forKey: key(0, 1, pk)) }
            first = last + 1
        }
        #expect(table.count == 100_000 && table.overflowCount == 0)
        #expect(table[key(0, 1, 1)] == 1 && table[key(0, 1, rows)] == Int(rows))
        // Doubling from 256 would end at 131,072 slots; growing by half past 4,096 ends at 104,976.
        #expect(table.laneSlotCount >= 100_000 && table.laneSlotCount <= 110_000, "\(table.laneSlotCount) slots")
        #expect(RowTable<Int>.grownLength(1_024) == 2_048 && RowTable<Int>.grownLength(8_192) == 12_288)
    }
}
