// The row cache's keys, counters and read tickets, and the size estimate its byte bound uses.
extension RowCache {
    /// A cache key: a store and a row.
    public struct Key: Hashable, Sendable {
        /// The store's identity.
        public var store: ObjectIdentifier
        /// The row.
        public var row: RowID
        /// Creates a key.
        @inlinable public init(store: ObjectIdentifier, row: RowID) {
            self.store = store
            self.row = row
        }

        @inlinable public func hash(into hasher: inout Hasher) {
            hasher.combine(row.packed ^ UInt64(UInt(bitPattern: store)))
        }

        /// One seeded mixing step instead of SipHash, as for ``RowID``.
        @inlinable public func _rawHashValue(seed: Int) -> Int {
            RowID.mix(row.packed ^ UInt64(UInt(bitPattern: store)), seed: seed)
        }
    }

    /// Counters for tuning and tests.
    public struct Statistics: Sendable, Hashable {
        /// Lookups that found a row.
        public var hits = 0
        /// Lookups that did not.
        public var misses = 0
        /// Rows dropped to stay within the limit.
        public var evictions = 0
        /// Eviction passes run (each scans every row); amortized over many stored rows.
        public var evictionPasses = 0
        /// Rows resident now.
        public var count = 0
        /// Rows pinned now.
        public var pinned = 0
        /// Estimated bytes held by resident rows.
        public var bytes = 0
    }

    /// A read of a store in progress (C5): rows it returns are stored with
    /// ``store(_:in:since:)`` and its relatives, which leave out rows removed after it began.
    struct Read: Sendable {
        let removals: UInt64
    }

    /// What ``snapshotOrRead(for:pin:)`` found.
    enum Lookup {
        /// The cached row (pinned when asked).
        case cached(RowSnapshot)
        /// A miss: a read begun for the caller, who asks the driver and then calls
        /// ``store(_:in:pinning:ending:)``, or ``endRead(_:)`` when the driver fails.
        case read(Read)
    }

    /// A rough size of a row's values, for the byte bound.
    static func estimatedBytes(_ values: [StoreValue]) -> Int {
        var total = 32 + values.count * 24
        for index in values.indices {
            switch values[index] {
            case .string(let text): total += text.utf8.count
            case .binary(let data): total += data.count
            case .references(let ids): total += ids.count * 12
            default: break
            }
        }
        return total
    }
}
