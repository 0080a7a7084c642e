import Foundation

/// A parsed `NSKeyedArchiver` archive: the flat `$objects` table, the `$top` entries, and
/// navigation from object to object through `CF$UID` references.
///
/// Core Data stores compiled models (`.mom` files, `Z_MODELCACHE`) this way. The archive is read
/// with Foundation's `PropertyListSerialization` (binary, XML or OpenStep plists) and converted
/// once into ``Value``s; every reference is checked against the object table at creation, so
/// navigating never fails on a dangling reference. Object graphs may be cyclic (an entity
/// points at its model, which points back at the entity); navigation is lazy and never recurses.
///
/// Thread safety: immutable and `Sendable`.
public final class KeyedArchive: Sendable {
    /// One value of the archive's property list, with `CF$UID` references kept as ``uid(_:)``.
    public enum Value: Sendable, Hashable {
        case bool(Bool)
        case integer(Int64)
        case real(Double)
        case string(String)
        case data(Data)
        case date(Date)
        /// A reference to `$objects[n]`.
        case uid(Int)
        case array([Value])
        case dictionary([String: Value])
    }

    /// The archive's object table; index 0 is conventionally the string `$null`.
    public let objects: [Value]
    /// The `$top` entries (a root object is usually under `root`).
    public let top: [String: Value]

    /// The deepest nesting of arrays and dictionaries accepted inside one object.
    static let maximumNesting = 64

    /// Parses an archive.
    ///
    /// - Parameter data: A property list written by `NSKeyedArchiver`.
    /// - Throws: ``SQLiteError`` with code ``SQLiteError/Code/corrupt`` when the data is not a
    ///   property list, not a keyed archive, or holds a reference outside its object table.
    public init(data: Data) throws {
        let objects: [Value]
        var top: [String: Value] = [:]
        if BinaryPropertyList.isBinary(data) {
            // Binary lists (what Core Data writes) are read by Strata's own checked reader.
            guard case .dictionary(let root) = try BinaryPropertyList.parse(data, what: "keyed archive") else {
                throw SQLiteError(.corrupt, "keyed archive's property list is not a dictionary")
            }
            if let archiver = root["$archiver"], archiver != .string("NSKeyedArchiver") {
                throw SQLiteError(.corrupt, "archive was written by '\(archiver)', not NSKeyedArchiver")
            }
            guard case .array(let table)? = root["$objects"], !table.isEmpty else {
                throw SQLiteError(.corrupt, "keyed archive has no $objects table")
            }
            guard case .dictionary(let entries)? = root["$top"] else {
                throw SQLiteError(.corrupt, "keyed archive has no $top dictionary")
            }
            for value in table { try Self.checkNesting(value, depth: 0) }
            objects = table
            top = entries
        } else {
            let plist: Any
            do {
                plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            } catch {
                throw SQLiteError(.corrupt, "keyed archive is not a property list (\(data.count) bytes)")
            }
            guard let root = plist as? [String: Any] else {
                throw SQLiteError(.corrupt, "keyed archive's property list is not a dictionary")
            }
            if let archiver = root["$archiver"] as? String, archiver != "NSKeyedArchiver" {
                throw SQLiteError(.corrupt, "archive was written by '\(archiver)', not NSKeyedArchiver")
            }
            guard let rawObjects = root["$objects"] as? [Any], !rawObjects.isEmpty else {
                throw SQLiteError(.corrupt, "keyed archive has no $objects table")
            }
            guard let rawTop = root["$top"] as? [String: Any] else {
                throw SQLiteError(.corrupt, "keyed archive has no $top dictionary")
            }
            objects = try rawObjects.map { try Self.convert($0, depth: 0) }
            for (key, value) in rawTop { top[key] = try Self.convert(value, depth: 0) }
        }
        for value in objects { try Self.checkReferences(value, count: objects.count) }
        for value in top.values { try Self.checkReferences(value, count: objects.count) }
        self.objects = objects
        self.top = top
    }

    /// Refuses values nested deeper than ``maximumNesting`` (as ``convert(_:depth:)`` does).
    private static func checkNesting(_ value: Value, depth: Int) throws {
        guard depth < maximumNesting else {
            throw SQLiteError(.corrupt, "keyed archive nests deeper than \(maximumNesting) levels")
        }
        switch value {
        case .array(let values): for element in values { try checkNesting(element, depth: depth + 1) }
        case .dictionary(let entries): for element in entries.values { try checkNesting(element, depth: depth + 1) }
        default: break
        }
    }

    /// The object stored under `key` in `$top` (for example `root`).
    ///
    /// - Throws: ``SQLiteError`` (corrupt) when there is no such entry or it is `$null`.
    public func topObject(_ key: String = "root") throws -> ArchivedObject {
        guard let value = top[key], let object = resolve(value) else {
            throw SQLiteError(.corrupt, "keyed archive has no '\(key)' object in $top")
        }
        return object
    }

    /// The object at `index` of `$objects`, or `nil` for `$null` or an index out of range.
    public func object(at index: Int) -> ArchivedObject? {
        guard objects.indices.contains(index) else { return nil }
        if index == 0, case .string("$null") = objects[0] { return nil }
        return ArchivedObject(archive: self, value: objects[index], index: index)
    }

    /// Follows a reference, or wraps an inline value; `nil` for `$null`.
    func resolve(_ value: Value) -> ArchivedObject? {
        if case .uid(let index) = value { return object(at: index) }
        return ArchivedObject(archive: self, value: value, index: nil)
    }

    private static func checkReferences(_ value: Value, count: Int) throws {
        switch value {
        case .uid(let index) where index < 0 || index >= count:
            throw SQLiteError(.corrupt, "keyed archive refers to object \(index), but has only \(count) objects")
        case .array(let values):
            for element in values { try checkReferences(element, count: count) }
        case .dictionary(let entries):
            for element in entries.values { try checkReferences(element, count: count) }
        default:
            break
        }
    }

    /// Converts one Foundation property-list value.
    private static func convert(_ any: Any, depth: Int) throws -> Value {
        guard depth < maximumNesting else {
            throw SQLiteError(.corrupt, "keyed archive nests deeper than \(maximumNesting) levels")
        }
        if let uid = uidValue(any) { return .uid(uid) }
        switch any {
        case let value as String: return .string(value)
        case let value as Data: return .data(value)
        case let value as Date: return .date(value)
        case let values as [Any]: return .array(try values.map { try convert($0, depth: depth + 1) })
        case let entries as [String: Any]:
            var converted: [String: Value] = [:]
            for (key, value) in entries { converted[key] = try convert(value, depth: depth + 1) }
            return .dictionary(converted)
        default:
            break
        }
        if type(of: any) == Bool.self, let value = any as? Bool { return .bool(value) }
        if let number = any as? NSNumber {
            #if canImport(Darwin)
                // Booleans arrive as Swift `Bool` on Linux and as CFBoolean-backed NSNumber on Apple platforms.
                if CFGetTypeID(number) == CFBooleanGetTypeID() { return .bool(number.boolValue) }
            #endif
            switch String(cString: number.objCType) {
            case "f", "d": return .real(number.doubleValue)
            case "Q" where number.uint64Value > UInt64(Int64.max):
                throw SQLiteError(.corrupt, "keyed archive holds integer \(number.uint64Value), too large for Int64")
            default: return .integer(number.int64Value)
            }
        }
        switch any {
        case let value as Int: return .integer(Int64(value))
        case let value as Int64: return .integer(value)
        case let value as Double: return .real(value)
        case let value as Bool: return .bool(value)
        default:
            throw SQLiteError(.corrupt, "keyed archive holds a value of unexpected type \(type(of: any))")
        }
    }

    /// The object index of a `CF$UID` reference, in whichever form Foundation delivers it.
    ///
    /// Property-list parsers disagree: XML plists (and some bridges) yield `["CF$UID": n]`;
    /// swift-corelibs-foundation yields an internal `_NSKeyedArchiverUID` object whose `value`
    /// field is read by reflection; Apple's CoreFoundation yields a `CFKeyedArchiverUID` whose
    /// description ends with `{value = n}`.
    static func uidValue(_ any: Any) -> Int? {
        if let entries = any as? [String: Any], entries.count == 1, let number = entries["CF$UID"] {
            if let value = number as? Int { return value }
            return (number as? NSNumber)?.intValue
        }
        let typeName = String(describing: type(of: any))
        guard typeName.contains("UID") else { return nil }
        for child in Mirror(reflecting: any).children where child.label == "value" {
            if let value = child.value as? UInt32 { return Int(value) }
            if let value = child.value as? UInt64, value <= UInt64(Int.max) { return Int(value) }
            if let value = child.value as? Int { return value }
        }
        let text = String(describing: any)
        if let range = text.range(of: "value = ") {
            let digits = text[range.upperBound...].prefix(while: \.isNumber)
            return Int(digits)
        }
        return nil
    }
}
