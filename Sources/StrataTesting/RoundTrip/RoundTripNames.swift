import Foundation
import Strata

/// The names the round-trip generator gives entities, properties, configurations and indexes:
/// plain words, words that are SQL keywords, names that collide after upper-casing (`name`,
/// `Name`, `NAME`), names like Core Data's own columns and tables (`_pk`, `_PRIMARYKEY`), names a
/// column suffix could produce (`title1`), names `ManagedObject` and Swift use, and letters beyond
/// ASCII with and without combining marks (`größe`, `café` written `cafe` + U+0301).
///
/// Every name is an identifier (``ManagedObjectModel/isValidName(_:)``); which one comes is the
/// generator's choice, so a failure replays from its seed.
struct RoundTripNames {
    static let entityWords = [
        "Item", "ITEM", "item", "Person", "Order", "Group", "Select", "Table", "Index", "Where", "Values", "Key",
        "Transaction", "Primary", "_PRIMARYKEY", "_METADATA", "_MODELCACHE", "Z", "Zebra", "Node", "Note", "NOTE",
        "Größe", "Café", "Cafe\u{301}", "Ωmega", "Record", "RECORD", "Entity", "Object", "Date", "String", "Default",
        "Null", "From", "Join", "Ent", "Pk", "Opt", "Tag", "TAG", "Tag1", "Ünit", "Δelta", "Row", "Column",
    ]

    static let propertyWords = [
        "name", "Name", "NAME", "title", "Title", "title1", "order", "group", "select", "from", "where", "index",
        "key", "value", "desc", "default", "null", "references", "primary", "table", "_pk", "_ent", "_opt", "z_pk",
        "pk", "ent", "opt", "description", "entity", "objectID", "class", "self", "Type", "größe", "café",
        "cafe\u{301}", "ñ", "_", "__x", "a1", "A1", "owner", "Owner", "count", "max", "min", "size", "label", "Label",
        "date", "data", "uuid", "url", "items", "Items", "children", "parent", "friends", "links", "Links", "tags",
        "reflexive", "REFLEXIVE", "inverse", "fok", "_fok_x", "id", "_id", "context", "values",
    ]

    static let configurationWords = [
        "Default1", "Cloud", "Local", "Select", "Group", "Archive", "ORDER", "Table", "Z_PK",
    ]

    static let indexWords = ["byName", "select", "Index", "ORDER", "by_name", "z_pk", "größe", "i1", "I1"]

    /// Every name handed out so far, by scope, so repeats get a numeric suffix.
    private var used: Set<String> = []

    /// A fresh entity name (unique in the model, exactly; names equal after upper-casing may both come).
    mutating func entity<G: RandomNumberGenerator>(_ rng: inout G) -> String {
        // non-empty list
        fresh(Self.entityWords.randomElement(using: &rng)!, avoiding: { used.contains($0) }, rng: &rng)
    }

    /// A fresh property name not in `taken` (the names of the entity's ancestors and descendants).
    func property<G: RandomNumberGenerator>(_ rng: inout G, taken: Set<String>) -> String {
        // non-empty list
        fresh(Self.propertyWords.randomElement(using: &rng)!, avoiding: { taken.contains($0) }, rng: &rng)
    }

    /// A fresh configuration name not in `taken`.
    func configuration<G: RandomNumberGenerator>(_ rng: inout G, taken: Set<String>) -> String {
        // non-empty list
        fresh(Self.configurationWords.randomElement(using: &rng)!, avoiding: { taken.contains($0) }, rng: &rng)
    }

    /// A fetch index name (indexes are named freely; duplicates across entities are fine).
    func index<G: RandomNumberGenerator>(_ rng: inout G, taken: Set<String>) -> String {
        // non-empty list
        fresh(Self.indexWords.randomElement(using: &rng)!, avoiding: { taken.contains($0) }, rng: &rng)
    }

    mutating func markUsed(_ name: String) { used.insert(name) }

    private func fresh<G: RandomNumberGenerator>(
        _ base: String, avoiding isTaken: (String) -> Bool, rng: inout G
    ) -> String {
        var name = base
        var suffix = 2
        while isTaken(name) {
            name = base + String(suffix)
            suffix += Int.random(in: 1...3, using: &rng)
        }
        return name
    }
}
