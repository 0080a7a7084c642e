import Foundation
import Strata

/// Reads and writes `Z_METADATA`: the store UUID in `Z_UUID` and a binary-plist dictionary in
/// `Z_PLIST`, as Core Data's SQLite stores keep them, so a store converted from SQLite keeps every
/// metadata key.
///
/// Strata's keys: `StrataEntityVersionHashes` (entity name → version hash,
/// ``StoreMetadata/entityVersionHashes``) and whatever the coordinator puts in
/// ``StoreMetadata/values``. `NSStoreType` is `PostgreSQL`.
enum MetadataCoding {
    /// The plist key of ``StoreMetadata/entityVersionHashes``.
    static let entityHashesKey = "StrataEntityVersionHashes"
    /// Core Data's store type key.
    static let storeTypeKey = "NSStoreType"

    /// Reads the metadata row; `nil` when the table has no row.
    ///
    /// - Throws: ``StoreError`` `.corrupt` when `Z_PLIST` is not a property-list dictionary.
    static func read(from connection: PGConnection, table: String, store: String) throws -> StoreMetadata? {
        let result = try connection.execute(
            "SELECT \("Z_UUID".sqlName), \("Z_PLIST".sqlName) FROM \(table) ORDER BY \("Z_VERSION".sqlName) LIMIT 1")
        guard result.rowCount > 0 else { return nil }
        let uuid = result.isNull(0, 0) ? UUID().uuidString : result.rawString(0, 0)
        var values: [String: MetadataValue] = [:]
        if !result.isNull(0, 1) {
            let data = result.data(0, 1)
            let plist: Any
            do {
                plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            } catch {
                throw StoreError(
                    .corrupt, "Z_METADATA.Z_PLIST is not a property list; restore the store from a backup", store: store
                )
            }
            guard let dictionary = plist as? [String: Any] else {
                throw StoreError(
                    .corrupt, "Z_METADATA.Z_PLIST is not a dictionary; restore the store from a backup", store: store)
            }
            for (key, value) in dictionary {
                if let converted = metadataValue(value) { values[key] = converted }
            }
        }
        var hashes: [String: Data] = [:]
        if case .dictionary(let stored)? = values.removeValue(forKey: entityHashesKey) {
            for (name, value) in stored { if let data = value.dataValue { hashes[name] = data } }
        }
        values[storeTypeKey] = nil
        return StoreMetadata(
            uuid: uuid, storeType: StoreType.postgreSQLName, entityVersionHashes: hashes, values: values)
    }

    /// Replaces the metadata row (inside the caller's transaction).
    static func write(_ metadata: StoreMetadata, to connection: PGConnection, table: String, store: String) throws {
        var dictionary: [String: Any] = [:]
        for (key, value) in metadata.values { dictionary[key] = plistValue(value) }
        dictionary[storeTypeKey] = StoreType.postgreSQLName
        if !metadata.entityVersionHashes.isEmpty { dictionary[entityHashesKey] = metadata.entityVersionHashes }
        let data: Data
        do {
            data = try PropertyListSerialization.data(fromPropertyList: dictionary, format: .binary, options: 0)
        } catch {
            throw StoreError(
                .invalidRequest, "the metadata cannot be written as a property list: \(error)", store: store)
        }
        var parameters = PGParameters()
        parameters.append(rawText: metadata.uuid)
        parameters.append(bytes: data)
        try connection.execute(
            """
            INSERT INTO \(table) (\("Z_VERSION".sqlName), \("Z_UUID".sqlName), \("Z_PLIST".sqlName)) VALUES (1, $1, $2) \
            ON CONFLICT (\("Z_VERSION".sqlName)) DO UPDATE SET \("Z_UUID".sqlName) = EXCLUDED.\("Z_UUID".sqlName), \
            \("Z_PLIST".sqlName) = EXCLUDED.\("Z_PLIST".sqlName)
            """, parameters)
    }

    /// The keys a new store starts with.
    static func initialValues(for model: ManagedObjectModel) -> [String: MetadataValue] {
        [
            "NSStoreModelVersionHashesVersion": .integer(3),
            "NSStoreModelVersionIdentifiers": .array(
                (model.versionIdentifiers.isEmpty ? [""] : model.versionIdentifiers).map(MetadataValue.string)),
        ]
    }

    static func metadataValue(_ value: Any) -> MetadataValue? {
        switch value {
        case let string as String: return .string(string)
        case let data as Data: return .data(data)
        case let date as Date: return .date(date)
        case let bool as Bool where type(of: value) == Bool.self: return .bool(bool)
        case let int as Int: return .integer(Int64(int))
        case let int as Int64: return .integer(int)
        case let double as Double: return .double(double)
        case let number as NSNumber:
            let double = number.doubleValue
            return double == double.rounded() && abs(double) < 9e18 ? .integer(number.int64Value) : .double(double)
        case let array as [Any]: return .array(array.compactMap(metadataValue))
        case let dictionary as [String: Any]: return .dictionary(dictionary.compactMapValues(metadataValue))
        default: return nil
        }
    }

    static func plistValue(_ value: MetadataValue) -> Any {
        switch value {
        case .string(let s): s
        case .integer(let n): n
        case .double(let d): d
        case .bool(let b): b
        case .data(let d): d
        case .date(let d): d
        case .array(let items): items.map(plistValue)
        case .dictionary(let entries): entries.mapValues(plistValue)
        }
    }
}
