import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataLMDB

/// An update of fixed-width fields patches the stored row's bytes (RowCodec.patch); every patched
/// row must be the row the whole encoder writes, and every other change must be left to it.
@Suite("LMDB row patches")
struct LMDBRowPatchTests {
    /// Fixed-width fields around strings, a decimal the fast encoder leaves to the general one, a
    /// to-one, a to-many and a transient slot.
    static let slots: [DatabaseLayout.Slot] = [
        .attribute(.integer16), .attribute(.string), .attribute(.integer32), .attribute(.integer64),
        .attribute(.double), .attribute(.string), .attribute(.date), .attribute(.boolean), .toOne(rel: 3),
        .links(rel: 4, inverse: nil, order: nil), .transient, .attribute(.float),
    ]
    static let plan = RowCodec.Plan(slots)

    /// A random value for `slot`, `nil` (stored as null) one time in five.
    static func value(_ slot: Int, _ generator: inout SeededGenerator) -> StoreValue {
        if slot == 9 { return .unfetched }
        if slot == 10 || Int.random(in: 0..<5, using: &generator) == 0 { return .null }
        switch slots[slot] {
        case .attribute(.integer16): return .integer(Int64(Int16.random(in: .min ... .max, using: &generator)))
        case .attribute(.integer32): return .integer(Int64(Int32.random(in: .min ... .max, using: &generator)))
        case .attribute(.integer64): return .integer(Int64.random(in: .min ... .max, using: &generator))
        case .attribute(.double), .attribute(.float): return .double(Double.random(in: -1e9...1e9, using: &generator))
        case .attribute(.date):
            return .date(Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e9, using: &generator)))
        case .attribute(.boolean): return .bool(Bool.random(using: &generator))
        case .attribute(.string):
            return .string(String(repeating: "é", count: Int.random(in: 0..<40, using: &generator)))
        case .toOne:
            return .reference(RowID(entity: 2, primaryKey: Int64.random(in: 1...1_000_000, using: &generator)))
        default: return .null
        }
    }

    @Test(
        "a patched row is byte for byte the row the encoder writes; other changes are refused (seed 0x9A7C, 4,000 updates)"
    )
    func patchesMatchTheEncoder() throws {
        var generator = SeededGenerator(seed: 0x9A7C)
        var patched = 0
        var refused = 0
        for _ in 0..<4_000 {
            let old = (0..<Self.slots.count).map { Self.value($0, &generator) }
            var new = old
            let changed = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                Int.random(in: 0..<Self.slots.count, using: &generator)
            }
            for slot in changed { new[slot] = Self.value(slot, &generator) }
            var stored: [UInt8] = []
            let size = try #require(RowCodec.encode(version: 4, values: old, plan: Self.plan, into: &stored))
            var buffer: [UInt8] = []
            let result = stored[0..<size].withUnsafeBytes {
                RowCodec.patch($0, version: 5, values: new, changed: changed, plan: Self.plan, into: &buffer)
            }
            let expected = try RowCodec.encode(version: 5, values: new, layout: Self.slots)
            // Only changes of present fixed-width fields to values are patched.
            let patchable = changed.allSatisfy { slot in
                Self.plan.kinds[slot].fixedWidth != nil && !old[slot].isNull && !new[slot].isNull
            }
            if let result {
                patched += 1
                #expect(patchable, "changed \(changed): \(old) -> \(new)")
                #expect(Array(buffer[0..<result]) == expected, "changed \(changed): \(old) -> \(new)")
            } else {
                refused += 1
                #expect(!patchable, "a patchable change was refused: \(changed): \(old) -> \(new)")
            }
        }
        print("row patches: seed 0x9A7C, 4000 updates, \(patched) patched, \(refused) encoded whole")
        #expect(patched > 500 && refused > 500)
    }

    @Test("a value that does not fit its field, a damaged stored row or a wrong slot count is refused, not patched")
    func refusesWhatTheEncoderWouldReport() throws {
        let values: [StoreValue] = [
            .integer(1), .string("a"), .integer(2), .integer(3), .double(4), .string("b"),
            .date(Date(timeIntervalSinceReferenceDate: 5)), .bool(true), .reference(RowID(entity: 2, primaryKey: 6)),
            .unfetched, .null, .double(7),
        ]
        var stored: [UInt8] = []
        let size = try #require(RowCodec.encode(version: 1, values: values, plan: Self.plan, into: &stored))
        let row = Array(stored[0..<size])
        var buffer: [UInt8] = []
        func patch(_ bytes: [UInt8], _ new: [StoreValue], _ changed: [Int], plan: RowCodec.Plan = Self.plan) -> Int? {
            bytes.withUnsafeBytes {
                RowCodec.patch($0, version: 2, values: new, changed: changed, plan: plan, into: &buffer)
            }
        }
        var tooWide = values
        tooWide[0] = .integer(70_000)
        #expect(patch(row, tooWide, [0]) == nil, "70,000 does not fit Integer 16")
        var wrongKind = values
        wrongKind[3] = .string("3")
        #expect(patch(row, wrongKind, [3]) == nil)
        var fine = values
        fine[3] = .integer(-3)
        #expect(patch(row, fine, [3]) == size)
        // The first string's length prefix claims more bytes than the row has.
        var damaged = row
        let firstString = RowCodec.Header.size + RowCodec.bitmapSize(Self.slots.count) + 2
        damaged.replaceSubrange(firstString..<firstString + 4, with: [0xFF, 0xFF, 0, 0])
        #expect(patch(damaged, fine, [3]) == nil)
        #expect(patch(Array(row[0..<12]), fine, [3]) == nil, "a truncated row")
        #expect(patch(row, Array(fine.dropLast()), [3]) == nil, "values of another shape")
        #expect(patch(row, fine, []) == nil, "nothing changed: nothing to patch")
        #expect(patch(row, fine, [99]) == nil, "a slot the row does not have")
    }
}
