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
}
