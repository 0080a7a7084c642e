import Foundation

/// Strata's version hash scheme (documented in docs/architecture.md, "Version hashes").
///
/// An entity's hash is SHA-256 over, in order and each followed by a zero byte: the tag
/// `strata.entity.v1`, the entity name, the superentity's hash in hex (empty for roots), the
/// entity's `versionHashModifier`, each unique constraint (names sorted, joined by `,`), then one
/// line per stored property sorted by name. A stored attribute's line is
/// `a|<name>|<type raw value>|<transformer name>|<modifier>`; a stored relationship's is
/// `r|<name>|<destination>|<inverse>|<toMany 0/1>|<ordered 0/1>|<modifier>`. A composite
/// attribute's line is the attribute line (type 2100) followed by `|{`, its elements' lines
/// (nested composites the same way) sorted by name and joined by `;`, and `}`. Transient
/// properties, defaults, optionality, validation rules, delete rules and user info do not affect
/// storage and are left out, so the hash changes exactly when what a store holds changes.
/// The model's hash is SHA-256 over `strata.model.v1` and each entity's name and hash, by name.
enum VersionHasher {
    /// The hash of `entity`, whose parent (if any) hashes to `parentHash`.
    static func hash(of entity: EntityDescription, parentHash: Data?) -> Data {
        var digest = SHA256Digest()
        digest.update(field: "strata.entity.v1")
        digest.update(field: entity.name)
        digest.update(field: parentHash?.hexString ?? "")
        digest.update(field: entity.versionHashModifier ?? "")
        for constraint in entity.uniquenessConstraints.map({ $0.sorted().joined(separator: ",") }).sorted() {
            digest.update(field: "u|" + constraint)
        }
        for line in entity.ownProperties.filter({ !$0.isTransient }).sorted(by: { $0.name < $1.name }).map(line) {
            digest.update(field: line)
        }
        return digest.finalize()
    }

    static func modelHash(_ entities: [EntityDescription]) -> Data {
        var digest = SHA256Digest()
        digest.update(field: "strata.model.v1")
        for entity in entities.sorted(by: { $0.name < $1.name }) {
            digest.update(field: entity.name)
            digest.update(entity.versionHash)
        }
        return digest.finalize()
    }

    /// An attribute's line; a composite's ends with its elements' lines, by name, in braces.
    private static func attributeLine(_ a: AttributeDescription) -> String {
        let line = "a|\(a.name)|\(a.type.rawValue)|\(a.valueTransformerName ?? "")|\(a.versionHashModifier ?? "")"
        guard a.isComposite else { return line }
        return line + "|{" + a.elements.sorted { $0.name < $1.name }.map(attributeLine).joined(separator: ";") + "}"
    }

    private static func line(_ property: PropertyDescription) -> String {
        switch property {
        case .attribute(let a):
            return attributeLine(a)
        case .relationship(let r):
            return
                "r|\(r.name)|\(r.destinationEntityName)|\(r.inverseName ?? "")|\(r.isToMany ? 1 : 0)|\(r.isOrdered ? 1 : 0)|\(r.versionHashModifier ?? "")"
        }
    }
}
