// Arrays compared and prefetched by their storage, without touching it.

extension Array {
    /// Whether both arrays use the same storage (one is a copy of the other, unchanged since);
    /// reads no element and no reference count.
    func sharesStorage(with other: [Element]) -> Bool {
        withUnsafeBufferPointer { mine in other.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress } }
    }

    /// The address of the array's storage object, to prefetch; reads nothing from it.
    var storageAddress: UnsafeRawPointer {
        // An array is one reference to its storage; the bits are only handed to a prefetch hint.
        unsafeBitCast(self, to: UnsafeRawPointer.self)
    }
}
