/// An array kept in chunks of 4,096 elements, for lists that grow to millions of elements one at
/// a time: appending never copies what is there, and no more than one chunk stands empty, where an
/// `Array` doubles its storage (at its growth holding the old and the new storage at once, up to
/// three times the elements' size).
struct ChunkedArray<Element>: RandomAccessCollection, MutableCollection {
    private static var shift: Int { 12 }
    private static var chunkSize: Int { 1 << shift }
    private var chunks: [[Element]] = []

    /// Creates an empty array.
    init() {}

    private(set) var count = 0
    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> Element {
        // A position past the end falls past the last chunk's elements, where Array traps.
        get { chunks[position >> Self.shift][position & (Self.chunkSize - 1)] }
        set { chunks[position >> Self.shift][position & (Self.chunkSize - 1)] = newValue }
    }

    /// Adds `element` at the end.
    mutating func append(_ element: Element) {
        if count & (Self.chunkSize - 1) == 0 {
            var chunk: [Element] = []
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(element)
        count += 1
    }
}
