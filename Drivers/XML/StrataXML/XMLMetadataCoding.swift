import Foundation
import Strata

/// How ``StoreMetadata`` maps onto `<databaseInfo>`.
///
/// - ``StoreMetadata/uuid`` is `<UUID>` (Core Data's `NSStoreUUID` key, if a file has it in the
///   plist instead, is read as the UUID and not kept twice).
/// - ``StoreMetadata/entityVersionHashes`` is the plist's `NSStoreModelVersionHashes` dictionary
///   (entity name → `<data>`), as in Apple's files.
/// - Every other key of ``StoreMetadata/values`` is written as it is, Apple's keys
///   (`NSPersistenceFrameworkVersion`, `NSStoreModelVersionIdentifiers`, …) beside Strata's
///   (`StrataModelVersionHash`, …), with its plist type (`integer`, `real`, `true`/`false`,
///   `data`, `date`, `string`, `array`, `dict`).
/// - `NSStoreType` is not written; the type is XML by being this file.
enum XMLMetadataCoding {
    static let hashesKey = "NSStoreModelVersionHashes"
    static let uuidKey = "NSStoreUUID"
    static let typeKey = "NSStoreType"

    /// The metadata of a file whose database info is `info`.
    static func metadata(from info: XMLDatabaseInfo, storeType: String) -> StoreMetadata {
        var values: [String: MetadataValue] = [:]
        if case .dictionary(let entries)? = info.metadata { values = entries }
        var hashes: [String: Data] = [:]
        if case .dictionary(let entries)? = values[hashesKey] {
            let data = entries.compactMapValues(\.dataValue)
            if data.count == entries.count {
                hashes = data
                values[hashesKey] = nil
            }
        }
        let plistUUID = values.removeValue(forKey: uuidKey)?.stringValue
        values[typeKey] = nil
        let uuid = info.uuid.flatMap { $0.isEmpty ? nil : $0 } ?? plistUUID ?? UUID().uuidString
        return StoreMetadata(uuid: uuid, storeType: storeType, entityVersionHashes: hashes, values: values)
    }

    /// The plist dictionary written for `metadata` (empty when there is nothing to write).
    static func dictionary(for metadata: StoreMetadata) -> [String: MetadataValue] {
        var entries = metadata.values
        entries[uuidKey] = nil
        entries[typeKey] = nil
        if !metadata.entityVersionHashes.isEmpty {
            entries[hashesKey] = .dictionary(metadata.entityVersionHashes.mapValues(MetadataValue.data))
        }
        return entries
    }
}
