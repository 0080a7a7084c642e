import Foundation
import Strata
import Testing

@Suite("Row ID hashing")
struct RowIDHashingTests {
    @Test("equal IDs hash alike; sequential keys of several entities spread evenly over a table's buckets")
    func spread() {
        let seed = 0x5EED_1234
        #expect(
            RowID(entity: 3, primaryKey: 9)._rawHashValue(seed: seed)
                == RowID(entity: 3, primaryKey: 9)._rawHashValue(seed: seed))
        #expect(
            RowID(entity: 3, primaryKey: 9)._rawHashValue(seed: seed)
                != RowID(entity: 3, primaryKey: 9)._rawHashValue(seed: seed + 1))
        let buckets = 1 << 16
        var load = [Int](repeating: 0, count: buckets)
        for entity in Int32(1)...4 {
            for key in Int64(1)...32_768 {
                load[RowID(entity: entity, primaryKey: key)._rawHashValue(seed: seed) & (buckets - 1)] += 1
            }
        }
        // 131,072 keys in 65,536 buckets: about 2 each; a poor hash piles dozens into some.
        #expect(load.max()! <= 12)
        #expect(load.filter { $0 == 0 }.count < buckets / 5)
        var set = Set<RowID>()
        for key in Int64(1)...1_000 { set.insert(RowID(entity: 1, primaryKey: key)) }
        #expect(
            set.count == 1_000 && set.contains(RowID(entity: 1, primaryKey: 500))
                && !set.contains(RowID(entity: 2, primaryKey: 500)))
    }
}
