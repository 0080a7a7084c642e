import Foundation

/// One object of a ``KeyedArchive``, or an inline value stored under a key of one.
///
/// Accessors return `nil` rather than throwing when a key is missing or has another type; the
/// caller (for example ``ModelCacheDecoder``) decides which absences are errors and names them.
///
/// Thread safety: a value type over an immutable archive; `Sendable`.
public struct ArchivedObject: Sendable {
    /// The archive the object belongs to.
    public let archive: KeyedArchive
    /// The object's value: a dictionary of keys for archived objects, a scalar for inline values.
    public let value: KeyedArchive.Value
    /// The object's index in `$objects`, or `nil` for an inline value.
    public let index: Int?

    /// The keys and values of an archived object; `nil` for scalars.
    public var fields: [String: KeyedArchive.Value]? {
        if case .dictionary(let entries) = value { return entries }
        return nil
    }

    /// The class names from `$class` → `$classes`, most specific first (empty for scalars).
    public var classNames: [String] {
        guard let classValue = fields?["$class"], let description = archive.resolve(classValue)?.fields else {
            return []
        }
        if case .array(let names)? = description["$classes"] {
            let strings = names.compactMap { name -> String? in
                if case .string(let text) = name { return text }
                return nil
            }
            if !strings.isEmpty { return strings }
        }
        if case .string(let name)? = description["$classname"] { return [name] }
        return []
    }

    /// The most specific class name (`$class` → `$classname`), or `nil` for scalars.
    public var className: String? {
        guard let classValue = fields?["$class"], let description = archive.resolve(classValue)?.fields,
            case .string(let name)? = description["$classname"]
        else { return nil }
        return name
    }

    /// Whether the object's class is `name` or inherits from it.
    public func isKind(of name: String) -> Bool { classNames.contains(name) }

    /// The object stored under `key`, following a reference; `nil` when absent or `$null`.
    public subscript(key: String) -> ArchivedObject? {
        guard let stored = fields?[key] else { return nil }
        return archive.resolve(stored)
    }

    /// The most objects ``string`` and ``data`` follow through `NS.string`/`NS.data` (one in
    /// archives Foundation writes): an archive whose objects refer to themselves, or to each
    /// other in a long chain, reads as `nil` instead of recursing without end.
    static let maximumIndirection = 8

    /// The text of a string: a plain string, or an `NSString`/`NSMutableString` object (`NS.string`).
    public var string: String? {
        var current = self
        for _ in 0...Self.maximumIndirection {
            switch current.value {
            case .string(let text): return text == "$null" && current.index == 0 ? nil : text
            case .dictionary:
                guard let next = current["NS.string"] else { return nil }
                current = next
            default: return nil
            }
        }
        return nil
    }

    /// An integer: inline, or an `NSNumber` stored as an object. Integral reals and Booleans convert.
    public var integer: Int64? {
        switch value {
        case .integer(let number): return number
        case .bool(let flag): return flag ? 1 : 0
        case .real(let number) where number.rounded() == number && abs(number) < 9.2e18: return Int64(number)
        default: return nil
        }
    }

    /// A floating-point number; integers convert.
    public var real: Double? {
        switch value {
        case .real(let number): return number
        case .integer(let number): return Double(number)
        default: return nil
        }
    }

    /// A Boolean; integers convert (non-zero is `true`).
    public var bool: Bool? {
        switch value {
        case .bool(let flag): return flag
        case .integer(let number): return number != 0
        default: return nil
        }
    }

    /// Bytes: plain data, or an `NSData`/`NSMutableData` object (`NS.data`); `nil` past
    /// ``maximumIndirection`` objects.
    public var data: Data? {
        var current = self
        for _ in 0...Self.maximumIndirection {
            switch current.value {
            case .data(let bytes): return bytes
            case .dictionary:
                guard let next = current["NS.data"] else { return nil }
                current = next
            default: return nil
            }
        }
        return nil
    }

    /// A date: a plist date, or an `NSDate` object (`NS.time`, seconds since 2001-01-01).
    public var date: Date? {
        // Written without a closure and with a separate lookup: Swift 6.3's optimizer crashes
        // (CopyPropagation) on the `switch` + `map` form of this getter in release builds.
        if case .date(let date) = value { return date }
        guard isDictionary, let seconds = self["NS.time"]?.real else { return nil }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    private var isDictionary: Bool {
        if case .dictionary = value { return true }
        return false
    }

    /// The elements of an `NSArray`, `NSSet` or `NSOrderedSet` (and mutable kinds), in stored
    /// order, without `$null`s; `nil` when this is not a collection.
    public var elements: [ArchivedObject]? {
        guard case .array(let values)? = fields?["NS.objects"] else { return nil }
        if fields?["NS.keys"] != nil { return nil }
        return values.compactMap { archive.resolve($0) }
    }

    /// The entries of an `NSDictionary` (and mutable kinds: `NS.keys` + `NS.objects`) or of an
    /// `NSKnownKeysDictionary1` (`searchMapping.keys` + `values`), in stored order; `nil` when
    /// this is not a dictionary or its keys and values do not pair up.
    public var entries: [(key: ArchivedObject, value: ArchivedObject)]? {
        if case .array(let keys)? = fields?["NS.keys"], case .array(let values)? = fields?["NS.objects"] {
            guard keys.count == values.count else { return nil }
            return zip(keys, values).compactMap { key, value in
                guard let key = archive.resolve(key), let value = archive.resolve(value) else { return nil }
                return (key, value)
            }
        }
        if let keys = self["searchMapping"]?["keys"]?.elements, let values = self["values"]?.elements {
            guard keys.count == values.count else { return nil }
            return Array(zip(keys, values))
        }
        return nil
    }

    /// The entries of a dictionary whose keys are strings, in stored order.
    public var stringKeyedEntries: [(key: String, value: ArchivedObject)]? {
        entries?.compactMap { entry in entry.key.string.map { ($0, entry.value) } }
    }

    /// Whether this is the same archived object as `other` (same archive and index).
    public func isSameObject(as other: ArchivedObject) -> Bool {
        archive === other.archive && index != nil && index == other.index
    }
}
