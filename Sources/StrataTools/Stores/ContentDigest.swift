import Foundation
import Strata

/// A digest over the content of one entity's rows: primary keys, canonical attribute values and
/// relationship targets (to-many ones sorted unless ordered), fed in primary-key order.
///
/// Two stores hold the same objects of an entity exactly when their digests and counts are equal,
/// whatever their drivers: targets are named by entity name and primary key, values by their
/// case and exact bytes (doubles by bit pattern, decimals by their text, dates by the bit pattern
/// of their interval since 2001).
public struct ContentDigest {
    private var digest = SHA256Digest()
    private let entity: EntityDescription
    private let model: ManagedObjectModel
    /// Rows fed so far.
    public private(set) var count = 0

    /// Starts a digest for rows of `entity`.
    public init(entity: EntityDescription, model: ManagedObjectModel) {
        self.entity = entity
        self.model = model
    }

    /// Adds rows, which must come in ascending primary-key order across calls.
    public mutating func add(_ rows: [RowSnapshot]) {
        for row in rows {
            count += 1
            digest.update(field: String(row.id.primaryKey))
            for (slot, property) in entity.properties.enumerated() where !property.isTransient {
                let value = slot < row.values.count ? row.values[slot] : .null
                digest.update(field: property.name)
                switch property {
                case .attribute: add(value)
                case .relationship(let relationship):
                    var targets: [String]
                    switch value {
                    case .reference(let id): targets = [target(id)]
                    case .references(let ids): targets = ids.map(target)
                    default: targets = []
                    }
                    if !relationship.isOrdered { targets.sort() }
                    digest.update(field: targets.joined(separator: ","))
                }
            }
        }
    }

    /// The digest's hex text.
    public var hexString: String { digest.finalize().hexString }

    private func target(_ id: RowID) -> String {
        "\(model.entity(number: id.entity)?.name ?? "#\(id.entity)")/\(id.primaryKey)"
    }

    private mutating func add(_ value: StoreValue) {
        switch value {
        case .null, .unfetched: digest.update(field: "n")
        case .integer(let i): digest.update(field: "i\(i)")
        case .double(let d): digest.update(field: "f\(d.bitPattern)")
        case .decimal(let d): digest.update(field: "m\(d)")
        case .string(let s): digest.update(field: "s\(s)")
        case .bool(let b): digest.update(field: b ? "b1" : "b0")
        case .date(let d): digest.update(field: "d\(d.timeIntervalSinceReferenceDate.bitPattern)")
        case .binary(let data):
            digest.update(field: "x\(data.count)")
            digest.update(data)
        case .uuid(let u): digest.update(field: "u\(u.uuidString)")
        case .uri(let u): digest.update(field: "r\(u.absoluteString)")
        case .reference(let id): digest.update(field: "o\(target(id))")
        case .references(let ids): digest.update(field: "o" + ids.map(target).joined(separator: ","))
        }
    }
}
