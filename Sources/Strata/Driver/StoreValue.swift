import Foundation

/// The value of one property as Strata stores and compares it.
///
/// Every attribute type of the model maps onto one case (integers of every width on
/// ``integer(_:)``, `Float` and `Double` on ``double(_:)``, transformable values on
/// ``binary(_:)`` after their transformer ran). Relationships appear as ``reference(_:)`` (to-one)
/// and ``references(_:)`` (to-many, in order for ordered relationships). Drivers read and write
/// only these cases; the context converts them to and from Swift values at the object boundary.
///
/// `StoreValue` is `Sendable` and `Hashable`; equality is exact (`1` and `1.0` differ here; the
/// predicate evaluator compares numbers across cases).
public enum StoreValue: Sendable, Hashable {
    /// No value (`nil`). Optional attributes and unset to-one relationships hold it.
    case null
    /// Integer 16, 32 and 64 attributes, widened.
    case integer(Int64)
    /// Double and Float attributes (Float values are rounded to `Float` precision when set).
    case double(Double)
    /// Decimal attributes, kept exactly.
    case decimal(Decimal)
    /// String attributes.
    case string(String)
    /// Boolean attributes.
    case bool(Bool)
    /// Date attributes.
    case date(Date)
    /// Binary attributes, and transformable attributes after their value transformer ran.
    case binary(Data)
    /// UUID attributes.
    case uuid(UUID)
    /// URI attributes.
    case uri(URL)
    /// A to-one relationship's destination row.
    case reference(RowID)
    /// A to-many relationship's destination rows (in order for ordered relationships).
    case references([RowID])
    /// A to-many relationship whose members the driver did not load with the row; the context
    /// asks ``StoreDriver/relatedRows(_:)`` when the relationship is first accessed.
    case unfetched

    /// Whether this is ``null``.
    @inlinable public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Whether a new object holding this value in a slot has that slot set: anything but `nil`,
    /// an unfetched relationship and an empty to-many. Read in place (no copy of a payload but an
    /// empty check of references).
    var isSetOnInsert: Bool {
        switch self {
        case .null, .unfetched: false
        case .references(let ids): !ids.isEmpty
        default: true
        }
    }

    /// A short name of the case, for error messages ("integer", "string", …).
    public var kindName: String {
        switch self {
        case .null: "nil"
        case .integer: "integer"
        case .double: "double"
        case .decimal: "decimal"
        case .string: "string"
        case .bool: "boolean"
        case .date: "date"
        case .binary: "binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .reference: "object reference"
        case .references: "object references"
        case .unfetched: "unfetched relationship"
        }
    }
}

/// The identity of a row inside one store: the entity's number in the model and a primary key.
///
/// Primary keys are unique across an inheritance hierarchy (as in Core Data's SQLite layout).
/// Permanent keys are positive; temporary keys, given to objects inserted but not yet saved, are
/// negative and unique within a coordinator.
public struct RowID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The entity's number in the model (``EntityDescription/entityNumber``).
    public var entity: Int32
    /// The primary key (`Z_PK` in the SQLite layout); negative for temporary IDs.
    public var primaryKey: Int64

    /// Creates a row identifier.
    @inlinable public init(entity: Int32, primaryKey: Int64) {
        self.entity = entity
        self.primaryKey = primaryKey
    }

    /// Whether the key is temporary (the row has not been saved yet).
    @inlinable public var isTemporary: Bool { primaryKey < 0 }

    /// The entity number and key folded into one word (hashing feeds the hasher once).
    @inlinable public var packed: UInt64 {
        UInt64(bitPattern: primaryKey) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(UInt32(bitPattern: entity))
    }

    @inlinable public func hash(into hasher: inout Hasher) { hasher.combine(packed) }

    /// Dictionaries and sets hash a row ID with one seeded mixing step instead of SipHash: the
    /// row cache and every context look rows up by ID, and row IDs are numbers the stores hand
    /// out, not text an attacker chooses. (`_rawHashValue(seed:)` is `Hashable`'s own hook for
    /// this; equal IDs still hash equally, and ``hash(into:)`` stays for other hashers.)
    @inlinable public func _rawHashValue(seed: Int) -> Int { Self.mix(packed, seed: seed) }

    /// A 64-bit finalizer (xor-shift, multiply, xor-shift, multiply, xor-shift) of `value` and `seed`.
    @inlinable public static func mix(_ value: UInt64, seed: Int) -> Int {
        var x = value ^ UInt64(UInt(bitPattern: seed))
        x ^= x >> 32
        x &*= 0xD6E8_FEB8_6659_FD93
        x ^= x >> 32
        x &*= 0xD6E8_FEB8_6659_FD93
        x ^= x >> 32
        return Int(truncatingIfNeeded: x)
    }

    public static func < (lhs: RowID, rhs: RowID) -> Bool {
        (lhs.entity, lhs.primaryKey) < (rhs.entity, rhs.primaryKey)
    }

    public var description: String { "\(entity)/p\(primaryKey)" }
}

/// A row's version, incremented by every saved change (`Z_OPT` in the SQLite layout).
///
/// Versions only grow; a change set that names an older version than the store holds is stale.
public typealias RowVersion = Int64
