import Testing

@testable import StrataTools

@Suite("Chunked arrays")
struct ChunkedArrayTests {
    @Test("appends across chunk boundaries keep every element in place, and elements change in place")
    func appendAndChange() {
        var chunked = ChunkedArray<Int>()
        var plain: [Int] = []
        #expect(chunked.isEmpty)
        for value in 0..<10_000 {
            chunked.append(value * 3)
            plain.append(value * 3)
        }
        #expect(chunked.count == 10_000)
        #expect(Array(chunked) == plain)
        for position in [0, 4_095, 4_096, 8_191, 8_192, 9_999] {
            chunked[position] = -position
            plain[position] = -position
        }
        #expect(Array(chunked) == plain)
        #expect(chunked[4_096] == -4_096 && chunked[4_097] == 4_097 * 3)
        #expect(chunked.indices == 0..<10_000)
    }
}
