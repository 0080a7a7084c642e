import Foundation
import StrataTesting
import Testing

@testable import StrataTools

@Suite("The interchange id table")
struct InterchangeIDTableTests {
    @Test("finds every id it holds at its position, refuses repeats and knows no others (seed 0x1D7AB1E, 40,000 ids)")
    func randomIDs() throws {
        let seed: UInt64 = 0x1D7A_B1E
        print("InterchangeIDTableTests seed \(seed), 40000 ids")
        var random = SeededGenerator(seed: seed)
        var table = InterchangeIDTable()
        var expected: [String: Int] = [:]
        var order: [String] = []
        for _ in 0..<40_000 {
            // Short and long ids, ASCII and not, some repeated.
            let length = Int.random(in: 0...70, using: &random)
            let alphabet = Array("ab/Zé9-😀")
            let id = String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] })
            let previous = table.insert(id)
            if let known = expected[id] {
                #expect(previous == known, "a repeated id answers with its first position")
            } else {
                #expect(previous == nil)
                expected[id] = order.count
                order.append(id)
            }
        }
        #expect(table.count == order.count)
        for (position, id) in order.enumerated() {
            #expect(table[position] == id)
            #expect(table.position(of: id) == position)
        }
        #expect(table.position(of: "not-in-the-table-" + String(repeating: "x", count: 80)) == nil)
    }

    @Test("exported object URIs share their prefixes; an id differing only in its prefix is another id")
    func objectURIs() {
        var table = InterchangeIDTable()
        let stores = [
            "x-coredata://8F1C2A34-5B6D-4E7F-8091-A2B3C4D5E6F7", "x-coredata://00000000-0000-0000-0000-000000000000",
        ]
        var ids: [String] = []
        for store in stores {
            for entity in ["Item", "Parent", "Child"] {
                for key in 1...3_000 { ids.append("\(store)/\(entity)/p\(key)") }
            }
        }
        ids += ["p1", "/p1", "Item/p1", "x-coredata://8F1C2A34-5B6D-4E7F-8091-A2B3C4D5E6F7/Item/"]
        for id in ids { #expect(table.insert(id) == nil, "\(id) is new") }
        for (position, id) in ids.enumerated() {
            #expect(table[position] == id)
            #expect(table.position(of: id) == position)
            #expect(table.insert(id) == position)
        }
        #expect(table.position(of: "x-coredata://8F1C2A34-5B6D-4E7F-8091-A2B3C4D5E6F7/Item/p3001") == nil)
        #expect(table.position(of: "x-coredata://8F1C2A34-5B6D-4E7F-8091-A2B3C4D5E6F7/Robot/p1") == nil)
    }
}
