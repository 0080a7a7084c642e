/// Grouping and aggregates a driver may compute for a fetch (``StoreFetch/aggregation``): the
/// driver side of dictionary fetches with `propertiesToGroupBy`, aggregate expressions and
/// `returnsDistinctResults`.
///
/// A driver that computes them answers with ``StoreFetchResult/groups``, one ``StoreGroup`` per
/// distinct combination of group keys among the rows matching the predicate, which it must then
/// have applied exactly. A driver may ignore the aggregation and answer with rows as usual; the
/// core then groups and aggregates them itself. Either way the answers are the same:
///
/// - Group keys compare as stored values do, after ``AggregateAccumulator/normalized(_:)`` (a
///   Double NaN groups with `nil`, `-0.0` with `0.0`); strings compare by their Unicode scalars
///   (as literal `==`), so composed and decomposed `é` are two groups.
/// - A group key that is a to-one relationship is the destination's ``StoreValue/reference(_:)``,
///   `nil` when there is none; a key path through a missing to-one reads `nil`.
/// - Each aggregate is exactly what ``AggregateAccumulator`` computes over the group's values.
/// - Without group keys there is exactly one group, even over no rows (count 0, sum 0, others `nil`).
public struct StoreAggregation: Sendable, Hashable {
    /// One aggregate: a function over a key path's values, or over the rows (`count` with no key path).
    public struct Aggregate: Sendable, Hashable {
        /// The function.
        public var function: AggregateFunction
        /// The key path (attributes, through to-one relationships); `nil` for `count(*)`.
        public var keyPath: String?
        /// The attribute type of the key path's values (`nil` for `count(*)`).
        public var type: AttributeType?

        /// Creates an aggregate.
        public init(_ function: AggregateFunction, keyPath: String?, type: AttributeType? = nil) {
            self.function = function
            self.keyPath = keyPath
            self.type = type
        }
    }

    /// The group keys: key paths of attributes or to-one relationships (through to-one relationships).
    public var groupBy: [String]
    /// The aggregates computed per group, in result order.
    public var aggregates: [Aggregate]

    /// Creates an aggregation.
    public init(groupBy: [String], aggregates: [Aggregate]) {
        self.groupBy = groupBy
        self.aggregates = aggregates
    }
}

/// One group of a driver's aggregated answer (``StoreFetchResult/groups``).
public struct StoreGroup: Sendable, Hashable {
    /// The group key values, in ``StoreAggregation/groupBy`` order.
    public var keys: [StoreValue]
    /// The aggregate values, in ``StoreAggregation/aggregates`` order.
    public var values: [StoreValue]

    /// Creates a group.
    public init(keys: [StoreValue], values: [StoreValue]) {
        self.keys = keys
        self.values = values
    }
}

/// A value as a group key: equal when the stored values are (after normalization), strings by
/// their Unicode scalars.
struct GroupKeyValue: Hashable {
    let value: StoreValue
    /// The store of a reference (references of two stores never meet in one group).
    let store: ObjectIdentifier?

    init(_ raw: StoreValue, store: ObjectIdentifier?) {
        value = AggregateAccumulator.normalized(raw)
        if case .reference = value { self.store = store } else { self.store = nil }
    }

    static func == (a: GroupKeyValue, b: GroupKeyValue) -> Bool {
        guard a.store == b.store else { return false }
        switch (a.value, b.value) {
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        default: return a.value == b.value
        }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(store)
        switch value {
        case .string(let s):
            hasher.combine(0 as UInt8)
            for byte in s.utf8 { hasher.combine(byte) }
        case .double(let d):
            hasher.combine(1 as UInt8)
            hasher.combine(d.bitPattern)
        default: hasher.combine(value)
        }
    }
}
