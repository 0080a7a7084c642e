import Foundation

/// Which rules a store's table and column names follow (docs/formats/sqlite.md, "Names").
///
/// Recorded in the store's metadata under ``metadataKey`` by every write of the metadata, so a
/// store keeps the rules that named its columns when the rules change:
///
/// - ``coreData``: Core Data's own rules, as far as they are known. Every store Strata creates, and
///   every store Apple's Core Data wrote.
/// - ``strataLegacy``: the rules of Strata before the key existed, for stores Strata wrote then
///   (their metadata has Strata's version hashes but not the key). They differ only where two
///   names collide in one table: properties were named in declaration order (attributes and
///   to-one relationships mixed), entities in model-number order, and names upper-cased with
///   Unicode's full case mapping.
enum LayoutNaming: Int, Sendable {
    case strataLegacy = 1
    case coreData = 2

    /// The metadata key that records the rules; Strata's own, hidden from ``Strata/StoreMetadata/values``.
    static let metadataKey = "StrataSQLiteNaming"

    /// The rules a store's metadata says it follows.
    ///
    /// - Parameters:
    ///   - recorded: The value under ``metadataKey``, if any.
    ///   - hasStrataHashes: Whether the metadata has Strata's version hashes (Strata wrote it).
    /// - Returns: `nil` for a value Strata does not know (a newer Strata wrote the store).
    static func of(recorded: Int64?, hasStrataHashes: Bool) -> LayoutNaming? {
        guard let recorded else { return hasStrataHashes ? .strataLegacy : .coreData }
        return Int(exactly: recorded).flatMap(LayoutNaming.init(rawValue:))
    }

    /// The base of an attribute's or to-one relationship's column: `Z` and the name upper-cased.
    ///
    /// Core Data passes each UTF-16 unit of the name through C `toupper`, which changes ASCII
    /// letters only (`café` → `ZCAFé`), and uses `-uppercaseString` for names of 512 units or more
    /// (decompiled `-[NSSQLStoreMappingGenerator newGeneratedPropertyName:]`, INFERRED).
    func columnBase(_ name: String) -> String {
        switch self {
        case .strataLegacy: return "Z" + name.uppercased()
        case .coreData: return "Z" + Self.asciiUppercased(name)
        }
    }

    /// `name` with ASCII letters upper-cased and every other character kept, or fully upper-cased
    /// when it has 512 UTF-16 units or more (Core Data's rule, see ``columnBase(_:)``).
    static func asciiUppercased(_ name: String) -> String {
        guard name.utf16.count < 512 else { return name.uppercased() }
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            if scalar.value >= 0x61 && scalar.value <= 0x7A, let upper = Unicode.Scalar(scalar.value - 0x20) {
                scalars.append(upper)
            } else {
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }
}

/// Hands out unique names the way Core Data's per-hierarchy name generator does: a base name the
/// first time, then the base followed by `1`, `2`, … (`ZTITLE`, `ZTITLE1`, `ZTITLE2`).
///
/// One generator serves the whole table of an inheritance hierarchy (its attribute, foreign-key,
/// entity and order columns and the join-table columns of its many-to-many relationships), and
/// one the table names of a store. Two deliberate differences from Core Data's generator: names
/// given out with a suffix are taken too (Core Data only remembers bases, so an attribute
/// `title1` could get `ZTITLE1` a second time), and `reserved` names (`Z_PK`, `Z_ENT`, `Z_OPT`,
/// which Core Data assigns outside the generator) are never given out, so an attribute `_pk`
/// gets `Z_PK1` where Core Data would write a duplicate column.
///
/// - Complexity: ``unique(_:)`` is O(k) in the number of names already taken with this base (restarting
///   at `1` gives the names Core Data's running counter gives, since every lower suffix is taken).
struct NameGenerator: Sendable {
    private var taken: Set<String>

    init(reserved: Set<String> = []) { taken = reserved }

    /// The columns every entity table starts with.
    static let bookkeepingColumns: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
    /// Core Data's own tables, which no entity or join table may take.
    static let systemTables: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]

    /// Whether `name` is taken.
    func contains(_ name: String) -> Bool { taken.contains(name) }

    /// The name ``unique(_:)`` would give out for `base`, without taking it.
    func next(_ base: String) -> String {
        guard taken.contains(base) else { return base }
        var suffix = 1
        while taken.contains(base + String(suffix)) { suffix += 1 }
        return base + String(suffix)
    }

    /// Takes `name` as it is; `false` when it was taken already.
    @discardableResult
    mutating func take(_ name: String) -> Bool { taken.insert(name).inserted }

    /// `base` if free, else `base1`, `base2`, …; the name returned is taken.
    mutating func unique(_ base: String) -> String {
        let name = next(base)
        taken.insert(name)
        return name
    }
}
