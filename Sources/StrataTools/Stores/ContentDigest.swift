import Foundation
import Strata

/// A digest over the content of one entity's rows: primary keys, canonical attribute values and
/// relationship targets (to-many ones sorted unless ordered), fed in primary-key order.
///
/// Two stores hold the same objects of an entity exactly when their digests and counts are equal,
/// whatever their drivers (both read with one model): each row is fed as its key, then each stored
/// property in model order as a type tag and its exact bytes (integers as 8 bytes, doubles and
/// dates by bit pattern, decimals by their text, strings, data and URIs with their length),
/// relationship targets as entity number and key. The bytes of a row are gathered in one buffer
/// and hashed with 128-bit MurmurHash3, seeded with the hash of the rows before it: a digest that
/// tells apart contents that differ by accident (not one that resists a forger), at the speed of a
/// read. A SHA-256 of the same bytes cost as much as reading the rows from SQLite.
///
/// - Complexity: O(bytes of the row) per row, no allocation per value (a decimal's text aside).
public struct ContentDigest: Sendable {
    private var state: (UInt64, UInt64) = (0, 0)
    /// What each stored slot is, in model order (transient slots left out).
    private let plan: [(slot: Int, kind: Kind)]
    /// One row's bytes, reused.
    private var scratch: [UInt8] = []
    /// Rows fed so far.
    public private(set) var count = 0

    private enum Kind: Sendable {
        case attribute, toOne, orderedToMany, unorderedToMany
    }

    /// Starts a digest for rows of `entity`.
    public init(entity: EntityDescription, model: ManagedObjectModel) {
        var plan: [(slot: Int, kind: Kind)] = []
        for (slot, property) in entity.properties.enumerated() where !property.isTransient {
            switch property {
            case .attribute: plan.append((slot, .attribute))
            case .relationship(let relationship):
                plan.append(
                    (slot, !relationship.isToMany ? .toOne : relationship.isOrdered ? .orderedToMany : .unorderedToMany)
                )
            }
        }
        self.plan = plan
        scratch.reserveCapacity(256)
    }

    /// Adds rows, which must come in ascending primary-key order across calls.
    public mutating func add(_ rows: [RowSnapshot]) {
        for row in rows {
            count += 1
            scratch.removeAll(keepingCapacity: true)
            append(tag: "K", row.id.primaryKey)
            for (slot, kind) in plan {
                let value = slot < row.values.count ? row.values[slot] : .null
                switch kind {
                case .attribute: append(value)
                case .toOne, .orderedToMany, .unorderedToMany:
                    switch value {
                    case .reference(let id): appendTargets(CollectionOfOne(id), sorted: false)
                    case .references(let ids): appendTargets(ids, sorted: kind == .unorderedToMany)
                    default: appendTargets(EmptyCollection(), sorted: false)
                    }
                }
            }
            state = scratch.withUnsafeBytes { Murmur3.hash($0, seed: state) }
        }
    }

    /// The digest's hex text: 32 hexadecimal digits.
    public var hexString: String {
        func hex(_ value: UInt64) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return hex(state.0) + hex(state.1)
    }

    private mutating func append(tag: Unicode.Scalar, _ number: Int64) {
        scratch.append(UInt8(ascii: tag))
        append(number)
    }

    private mutating func append(_ number: Int64) {
        withUnsafeBytes(of: number.bigEndian) { scratch.append(contentsOf: $0) }
    }

    private mutating func append(bytes tag: Unicode.Scalar, _ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            append(tag: tag, Int64(utf8.count))
            scratch.append(contentsOf: utf8)
        }
    }

    private mutating func appendTargets<Targets: Collection>(_ ids: Targets, sorted: Bool)
    where Targets.Element == RowID {
        append(tag: "R", Int64(ids.count))
        for id in sorted ? ids.sorted() : Array(ids) {
            withUnsafeBytes(of: id.entity.bigEndian) { scratch.append(contentsOf: $0) }
            append(id.primaryKey)
        }
    }

    private mutating func append(_ value: StoreValue) {
        switch value {
        case .null, .unfetched: scratch.append(UInt8(ascii: "n"))
        case .integer(let i): append(tag: "i", i)
        case .double(let d): append(tag: "f", Int64(bitPattern: d.bitPattern))
        case .decimal(let d): append(bytes: "m", d.description)
        case .string(let s): append(bytes: "s", s)
        case .bool(let b):
            scratch.append(UInt8(ascii: "b"))
            scratch.append(b ? 1 : 0)
        case .date(let d): append(tag: "d", Int64(bitPattern: d.timeIntervalSinceReferenceDate.bitPattern))
        case .binary(let data):
            append(tag: "x", Int64(data.count))
            scratch.append(contentsOf: data)
        case .uuid(let u):
            scratch.append(UInt8(ascii: "u"))
            withUnsafeBytes(of: u.uuid) { scratch.append(contentsOf: $0) }
        case .uri(let u): append(bytes: "r", u.absoluteString)
        case .reference(let id): appendTargets(CollectionOfOne(id), sorted: false)
        case .references(let ids): appendTargets(ids, sorted: false)
        }
    }
}
