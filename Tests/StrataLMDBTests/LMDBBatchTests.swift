import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataLMDB

@Suite("LMDB batch requests and partial row reads")
struct LMDBBatchTests {
    @Test("reading some fields agrees with the full decoder, and rejects what it rejects")
    func partialRead() throws {
        let slots = LMDBFormatTests.slots
        let valid = try RowCodec.encode(version: 5, values: LMDBFormatTests.values, layout: slots)
        let full = try valid.withUnsafeBytes {
            try RowCodec.decode($0, id: RowID(entity: 1, primaryKey: 9), layout: slots)
        }
        for wanted in [[], [0], [4, 7], [5, 11], Array(0..<slots.count)] {
            var fields = RowCodec.Fields(layout: slots, wanted: wanted)
            try valid.withUnsafeBytes { try RowCodec.read($0, layout: slots, into: &fields) }
            #expect(fields.version == 5)
            for slot in 0..<slots.count {
                if wanted.contains(slot), case .links = slots[slot] {
                    #expect(fields.values[slot] == .unfetched)
                } else if wanted.contains(slot) {
                    #expect(fields.values[slot] == full.values[slot], "slot \(slot)")
                } else {
                    #expect(fields.values[slot] == .unfetched, "slot \(slot) was not asked for")
                }
            }
            #expect(fields.offsets[12] == -1 && fields.offsets[13] == -1, "to-many and transient slots have no field")
        }
        var fields = RowCodec.Fields(layout: slots, wanted: [0])
        for length in 0..<valid.count {
            let cut = Array(valid.prefix(length))
            #expect(throws: FormatError.self) {
                try cut.withUnsafeBytes { try RowCodec.read($0, layout: slots, into: &fields) }
            }
        }
    }

    @Test("the fast decoder accepts and rejects exactly what the reference decoder does, with the same values")
    func fastDecoderAgrees() throws {
        // A layout the fast path handles whole, and the format tests' layout with every kind.
        let simple: [DatabaseLayout.Slot] = [
            .attribute(.integer64), .attribute(.string), .attribute(.string), .attribute(.integer32),
            .attribute(.double),
            .attribute(.date), .attribute(.boolean), .attribute(.integer16), .links(rel: 1, inverse: nil, order: nil),
            .transient, .toOne(rel: 3),
        ]
        let simpleValues: [StoreValue] = [
            .integer(7), .string("ann"), .string("Zoë ✓"), .integer(-40), .double(2.5),
            .date(Date(timeIntervalSinceReferenceDate: 3)),
            .bool(true), .null, .unfetched, .null, .reference(RowID(entity: 4, primaryKey: 123_456_789)),
        ]
        // The fast path reads that layout whole, the to-one reference included, when its strings
        // are ASCII (it leaves others to the reference decoder).
        let asciiValues = simpleValues.enumerated().map { $0.offset == 2 ? StoreValue.string("Zoe") : $0.element }
        let ascii = try RowCodec.encode(version: 3, values: asciiValues, layout: simple)
        let decoded = ascii.withUnsafeBytes {
            RowCodec.fastDecode($0, id: RowID(entity: 1, primaryKey: 1), plan: RowCodec.Plan(simple))
        }
        #expect(decoded?.values == asciiValues)
        var generator = SeededGenerator(seed: 0xDEC0DE)
        for (slots, values) in [(simple, simpleValues), (LMDBFormatTests.slots, LMDBFormatTests.values)] {
            let plan = RowCodec.Plan(slots)
            let valid = try RowCodec.encode(version: 3, values: values, layout: slots)
            var agreed = 0
            for round in 0..<4_000 {
                var bytes = valid
                if round > 0 {
                    for _ in 0..<Int.random(in: 1...3, using: &generator) {
                        switch Int.random(in: 0..<3, using: &generator) {
                        case 0:
                            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                                in: 0...255, using: &generator)
                        case 1:
                            bytes.insert(
                                UInt8.random(in: 0...255, using: &generator),
                                at: Int.random(in: 0...bytes.count, using: &generator))
                        default:
                            if bytes.count > 1 { bytes.remove(at: Int.random(in: 0..<bytes.count, using: &generator)) }
                        }
                    }
                }
                let id = RowID(entity: 1, primaryKey: 1)
                let reference = Result { try bytes.withUnsafeBytes { try RowCodec.decode($0, id: id, layout: slots) } }
                let fast = Result { try bytes.withUnsafeBytes { try RowCodec.decode($0, id: id, plan: plan) } }
                // The scan probe, where it answers, reads what the partial reader reads.
                let wanted = [3, 4, 7]
                var probed = [StoreValue](repeating: .unfetched, count: slots.count)
                var fields = RowCodec.Fields(layout: slots, wanted: wanted)
                let answered = bytes.withUnsafeBytes {
                    plan.probe($0, wanted: fields.wanted, last: fields.lastWanted, into: &probed)
                }
                if answered {
                    try bytes.withUnsafeBytes { try RowCodec.read($0, layout: slots, into: &fields, complete: false) }
                    for slot in wanted { #expect(probed[slot] == fields.values[slot], "round \(round), slot \(slot)") }
                }
                // The integer reader, where it answers, reads what the partial reader reads.
                for slot in [0, 3, 7] {
                    var one = RowCodec.Fields(layout: slots, wanted: [slot])
                    if let value = bytes.withUnsafeBytes({ plan.integer(at: slot, in: $0) }) {
                        try bytes.withUnsafeBytes { try RowCodec.read($0, layout: slots, into: &one, complete: false) }
                        #expect(one.values[slot] == .integer(value), "round \(round), slot \(slot)")
                    }
                }
                switch (reference, fast) {
                case (.success(let a), .success(let b)):
                    #expect(a == b, "round \(round)")
                    agreed += 1
                case (.failure(let a), .failure(let b)):
                    #expect("\(a)" == "\(b)", "round \(round)")
                    agreed += 1
                default: Issue.record("round \(round): reference \(reference), fast \(fast)")
                }
            }
            #expect(agreed == 4_000)
        }
    }

    @Test("patching fixed-width fields in place gives the row the full encoder would write")
    func patch() throws {
        let slots = LMDBFormatTests.slots
        var values = LMDBFormatTests.values
        var bytes = try RowCodec.encode(version: 5, values: values, layout: slots)
        var fields = RowCodec.Fields(layout: slots, wanted: [])
        try bytes.withUnsafeBytes { try RowCodec.read($0, layout: slots, into: &fields) }
        let changes: [(Int, StoreValue)] = [
            (0, .integer(-32_768)), (1, .integer(5)), (2, .integer(.max)), (4, .double(.infinity)), (6, .bool(false)),
            (7, .date(Date(timeIntervalSinceReferenceDate: -1.5))),
        ]
        let offsets = fields.offsets
        try bytes.withUnsafeMutableBytes { buffer in
            RowCodec.patchVersion(buffer, 6)
            for (slot, value) in changes {
                try #require(RowCodec.patch(buffer, slot: slots[slot], at: offsets[slot], with: value))
            }
            #expect(
                !RowCodec.patch(buffer, slot: slots[0], at: offsets[0], with: .integer(40_000)),
                "an Integer 16 overflow is refused")
            #expect(
                !RowCodec.patch(buffer, slot: slots[5], at: offsets[5], with: .string("x")),
                "strings are not fixed-width")
        }
        for (slot, value) in changes { values[slot] = value }
        #expect(bytes == (try RowCodec.encode(version: 6, values: values, layout: slots)))
    }

    @Test("batch updates keep indexes and unique constraints, with nil values and fixed-width patches alike")
    func indexesAfterBatchUpdates() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-batch")
        let (coordinator, driver, _) = try LMDBQueryTests.seeded(directory)
        let person = try #require(LMDBQueryTests.model.entity(named: "Person"))
        let context = ManagedObjectContext(coordinator: coordinator)
        let before = try driver.fetch(StoreFetch(entity: person)).rows
        let ageSlot = try #require(person.index(ofProperty: "age"))
        let scoreSlot = try #require(person.index(ofProperty: "score"))
        // age is indexed (full path with index upkeep); score is in a fetch index; nil ages stay nil.
        var raise = BatchUpdateRequest(entityName: "Person", predicate: try FetchPredicate(format: "score > 0"))
        raise.propertiesToUpdate = [
            "age": try FetchExpression(format: "age + 1000"), "score": try FetchExpression(format: "score * 2"),
        ]
        let changed = try context.execute(raise)
        let positive = before.filter { if case .double(let s) = $0.values[scoreSlot] { s > 0 } else { false } }
        #expect(changed.count == positive.count && !positive.isEmpty)
        let after = try driver.fetch(StoreFetch(entity: person)).rows
        for format in [
            "age == 1007", "age >= 1000", "age < 1000", "age == nil", "score BETWEEN {0, 5}", "score > 20",
            "age IN {7, 1014}",
        ] {
            let predicate = try FetchPredicate(format: format)
            var fetch = StoreFetch(entity: person)
            fetch.predicate = predicate
            let indexed = Set(try driver.fetch(fetch).rows.map(\.id))
            let evaluated = Set(
                // attribute-only
                try after.filter { try CompiledRowPredicate(predicate, entity: person)!.matches($0.values) }.map(\.id))
            #expect(indexed == evaluated, "\(format)")
        }
        let nilAges = before.filter { $0.values[ageSlot].isNull }.map(\.id)
        #expect(try driver.rows(for: nilAges).allSatisfy { $0.values[ageSlot].isNull })
        // A unique constraint broken by a batch update leaves every row as it was.
        let same = BatchUpdateRequest(entityName: "Person", propertiesToUpdate: ["code": .constant(.string("same"))])
        #expect(throws: StoreError.self) { try context.execute(same) }
        #expect(try driver.fetch(StoreFetch(entity: person)).rows == after)
        // Deleting people goes through objects: Person has a relationship to Team.
        let removed = try context.execute(
            BatchDeleteRequest(entityName: "Person", predicate: try FetchPredicate(format: "age >= 1000")))
        #expect(removed.count == positive.filter { !$0.values[ageSlot].isNull }.count)
        var older = StoreFetch(entity: person)
        older.predicate = try FetchPredicate(format: "age >= 1000")
        #expect(try driver.fetch(older).rows.isEmpty)
    }
}

@Suite("LMDB fast row encoder")
struct LMDBFastEncoderTests {
    @Test("the fast encoder writes the general encoder's bytes, and declines what only the general one can judge")
    func agreesWithGeneralEncoder() throws {
        let slots: [DatabaseLayout.Slot] = [
            .attribute(.integer64), .attribute(.string), .attribute(.integer32), .attribute(.double), .attribute(.date),
            .attribute(.boolean), .attribute(.integer16), .toOne(rel: 3), .links(rel: 1, inverse: nil, order: nil),
            .transient,
        ]
        let plan = RowCodec.Plan(slots)
        var generator = SeededGenerator(seed: 0xE2C0)
        var buffer: [UInt8] = []
        var written = 0
        for _ in 0..<3_000 {
            func maybe(_ value: StoreValue) -> StoreValue {
                Int.random(in: 0..<6, using: &generator) == 0 ? .null : value
            }
            let values: [StoreValue] = [
                maybe(.integer(Int64.random(in: .min ... .max, using: &generator))),
                maybe(
                    .string(
                        String(repeating: "é", count: Int.random(in: 0..<3, using: &generator))
                            + "x\(Int.random(in: 0..<1_000_000, using: &generator))")),
                maybe(.integer(Int64.random(in: -3_000_000_000...3_000_000_000, using: &generator))),
                maybe(.double(Double.random(in: -1e9...1e9, using: &generator))),
                maybe(.date(Date(timeIntervalSinceReferenceDate: Double.random(in: 0...1e9, using: &generator)))),
                maybe(.bool(Bool.random(using: &generator))),
                maybe(.integer(Int64.random(in: -40_000...40_000, using: &generator))),
                maybe(
                    .reference(
                        RowID(
                            entity: Int32.random(in: 1...9, using: &generator),
                            primaryKey: Int64.random(in: 1...1_000_000, using: &generator)))),
                Bool.random(using: &generator) ? .unfetched : .references([]),
                .null,
            ]
            let general = Result { try RowCodec.encode(version: 4, values: values, layout: slots) }
            if let size = RowCodec.encode(version: 4, values: values, plan: plan, into: &buffer) {
                written += 1
                #expect(Array(buffer[0..<size]) == (try general.get()))
            } else {
                // Declined only where a value does not fit its slot, which the general encoder refuses.
                #expect(throws: FormatError.self) { try general.get() }
            }
        }
        #expect(written > 1_000)
        #expect(
            RowCodec.encode(version: 1, values: [.string("x")], plan: plan, into: &buffer) == nil,
            "a row of the wrong width")
        let decimal = RowCodec.Plan([.attribute(.decimal)])
        #expect(
            RowCodec.encode(version: 1, values: [.decimal(1)], plan: decimal, into: &buffer) == nil,
            "decimals take the general path")
    }
}
