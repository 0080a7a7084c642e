import Foundation
import Strata

/// Reads and writes `Z_METADATA`: the store UUID in `Z_UUID` and a binary-plist dictionary in
/// `Z_PLIST` holding Apple's keys (kept as they were) and Strata's.
///
/// Strata's keys: `StrataEntityVersionHashes` (entity name → version hash of Strata's scheme, the
/// ``StoreMetadata/entityVersionHashes``), `StrataSQLiteNaming` (the store's
/// ``LayoutNaming``, kept by the driver and not shown in ``StoreMetadata/values``) and whatever
/// the coordinator puts in ``StoreMetadata/values`` (``StoreMetadata/modelVersionHashKey``).
/// Apple's `NSStoreModelVersionHashes` hold Apple's own hashes and are never replaced.
enum MetadataCoding {
    /// The plist key of ``StoreMetadata/entityVersionHashes``.
    static let entityHashesKey = "StrataEntityVersionHashes"
    /// Core Data's store type key.
    static let storeTypeKey = "NSStoreType"
    /// The store type name Core Data records.
    static let storeTypeName = "SQLite"

    /// Reads the metadata row; `nil` when the table has no row.
    static func read(from connection: SQLiteConnection) throws -> StoreMetadata? {
        try readWithNaming(from: connection)?.metadata
    }

    /// Reads the metadata row and the naming rules it records (``LayoutNaming/of(recorded:hasStrataHashes:)``;
    /// `nil` for rules this Strata does not know). The recorded number is returned as well.
    static func readWithNaming(from connection: SQLiteConnection) throws
        -> (metadata: StoreMetadata, naming: LayoutNaming?, recorded: Int64?)?
    {
        guard try connection.tableExists("Z_METADATA") else { return nil }
        let statement = try connection.prepare("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
        guard try statement.step() else { return nil }
        let uuid = statement.string(at: 0) ?? UUID().uuidString
        // The identifier names the store in every object URI. Core Data writes a UUID; a short
        // printable name is accepted too (hand-made stores), anything else is damage.
        guard !uuid.isEmpty, uuid.utf8.count <= 128,
            !uuid.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw SQLiteError(
                .corrupt, "Z_METADATA.Z_UUID is not a store identifier (\(uuid.utf8.count) bytes)",
                file: connection.path)
        }
        var values: [String: MetadataValue] = [:]
        if let data = statement.data(at: 1), BinaryPropertyList.isBinary(data) {
            // Binary lists (what Core Data and Strata write) are read by Strata's own checked reader.
            guard
                case .dictionary(let dictionary) = try BinaryPropertyList.parse(
                    data, what: "Z_METADATA.Z_PLIST in \(connection.path)")
            else {
                throw SQLiteError(.corrupt, "Z_METADATA.Z_PLIST is not a dictionary", file: connection.path)
            }
            for (key, value) in dictionary {
                if let converted = metadataValue(value) { values[key] = converted }
            }
        } else if let data = statement.data(at: 1), !data.isEmpty {
            let plist: Any
            do {
                plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            } catch {
                throw SQLiteError(.corrupt, "Z_METADATA.Z_PLIST is not a property list", file: connection.path)
            }
            guard let dictionary = plist as? [String: Any] else {
                throw SQLiteError(.corrupt, "Z_METADATA.Z_PLIST is not a dictionary", file: connection.path)
            }
            for (key, value) in dictionary {
                if let converted = metadataValue(value) { values[key] = converted }
            }
        }
        var hashes: [String: Data] = [:]
        if case .dictionary(let stored)? = values.removeValue(forKey: entityHashesKey) {
            for (name, value) in stored { if let data = value.dataValue { hashes[name] = data } }
        }
        let recorded = values.removeValue(forKey: LayoutNaming.metadataKey)
        var recordedNumber: Int64?
        if let recorded {
            guard case .integer(let number) = recorded else {
                throw SQLiteError(
                    .corrupt, "Z_METADATA.Z_PLIST has \(LayoutNaming.metadataKey) of another type than integer",
                    file: connection.path)
            }
            recordedNumber = number
        }
        let naming = LayoutNaming.of(recorded: recordedNumber, hasStrataHashes: !hashes.isEmpty)
        let type = values[storeTypeKey]?.stringValue ?? storeTypeName
        values[storeTypeKey] = nil
        let metadata = StoreMetadata(
            uuid: uuid, storeType: type == storeTypeName ? StoreType.sqliteName : type, entityVersionHashes: hashes,
            values: values)
        return (metadata, naming, recordedNumber)
    }

    /// Replaces the metadata row; records `naming` unless the store keeps Strata's legacy rules
    /// (whose stores never had the key).
    static func write(_ metadata: StoreMetadata, naming: LayoutNaming, to connection: SQLiteConnection) throws {
        var dictionary: [String: Any] = [:]
        for (key, value) in metadata.values where key != LayoutNaming.metadataKey {
            dictionary[key] = plistValue(value)
        }
        if naming != .strataLegacy { dictionary[LayoutNaming.metadataKey] = Int64(naming.rawValue) }
        dictionary[storeTypeKey] = storeTypeName
        if !metadata.entityVersionHashes.isEmpty { dictionary[entityHashesKey] = metadata.entityVersionHashes }
        let data: Data
        do {
            data = try PropertyListSerialization.data(fromPropertyList: dictionary, format: .binary, options: 0)
        } catch {
            throw SQLiteError(
                .unsupported, "the metadata cannot be written as a property list: \(error)", file: connection.path)
        }
        let version = try connection.scalar("SELECT Z_VERSION FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")?.integer ?? 1
        let statement = try connection.cached(
            "INSERT OR REPLACE INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (?, ?, ?)")
        try statement.bind([.integer(version), .text(metadata.uuid), .blob(data)])
        try statement.step()
    }

    /// The keys a new store starts with, as Core Data writes them.
    static func initialValues(for model: ManagedObjectModel) -> [String: MetadataValue] {
        [
            "NSStoreModelVersionHashesVersion": .integer(3),
            "NSStoreModelVersionIdentifiers": .array(
                (model.versionIdentifiers.isEmpty ? [""] : model.versionIdentifiers).map(MetadataValue.string)),
            "_NSAutoVacuumLevel": .string("2"),
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
        case let dictionary as [String: Any]:
            return .dictionary(dictionary.compactMapValues(metadataValue))
        default: return nil
        }
    }

    /// A value of a binary property list as metadata; `nil` for a keyed-archive reference.
    static func metadataValue(_ value: KeyedArchive.Value) -> MetadataValue? {
        switch value {
        case .bool(let flag): .bool(flag)
        case .integer(let number): .integer(number)
        case .real(let number): .double(number)
        case .string(let text): .string(text)
        case .data(let data): .data(data)
        case .date(let date): .date(date)
        case .uid: nil
        case .array(let items): .array(items.compactMap(metadataValue))
        case .dictionary(let entries): .dictionary(entries.compactMapValues(metadataValue))
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
