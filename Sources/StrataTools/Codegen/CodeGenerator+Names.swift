import Foundation
import Strata

/// How `strata codegen` turns model names into Swift: class names, member names, string literals
/// and comment text.
///
/// Rule: a name from the model never leaves the Swift token it is written in. In code it is an
/// identifier made of the characters Swift allows (others become `_`), renamed when it would
/// shadow a name the generated code uses or clash with another member; in a string literal every
/// quote, backslash and invisible character is escaped; in a comment every line break and
/// invisible character is escaped, so a name cannot end the comment.
extension CodeGenerator {
    /// Names a generated class cannot take (a `Object` suffix is added): the types and modules the
    /// generated code refers to by their plain names, and Swift's own special type names.
    static let typeNames: Set<String> = [
        "Int16", "Int32", "Int64", "Int", "Decimal", "Double", "Float", "String", "Bool", "Date", "Data", "UUID", "URL",
        "Set", "Array", "Dictionary", "Optional", "Any", "AnyObject", "Self", "Type", "Protocol", "ManagedObject",
        "ManagedObjectContext", "ManagedObjectModel", "ManagedAttribute", "ManagedToOne", "ManagedToMany",
        "ManagedOrderedToMany", "FetchPredicate", "FetchRequest", "SortKey", "ModelClasses", "GeneratedEntity",
        "Strata", "Foundation", "Swift",
    ]

    /// Member names a generated property cannot take (a `Value` suffix is added, then `_` until
    /// the name is free): the public members of ``ManagedObject`` (keep this list in step with it;
    /// the codegen compile test checks the awkward names it knows), Swift's special member names,
    /// and the generated classes' own members.
    static let reservedMembers: Set<String> = [
        "entity", "objectID", "managedObjectContext", "isFault", "isInserted", "isDeleted", "isUpdated", "hasChanges",
        "description", "debugDescription", "hash", "hashValue", "entityName", "fetchRequest", "fetch", "count", "value",
        "setValue", "storeValue", "setStoreValue", "object", "objects", "objectIDs", "addObject", "removeObject",
        "changedValues", "committedValues", "awakeFromInsert", "awakeFromFetch", "willSave", "didSave",
        "prepareForDeletion", "validateForInsert", "validateForUpdate", "validateForDelete", "init", "deinit",
        "subscript", "self", "Self", "super", "Type", "Protocol", "Any", "_", "true", "false", "nil", "selfValue",
        "keyValue", "predicateArgument", "setConvertedValue", "fulfillFault", "isAccessible", "delete", "in", "create",
        "all", "first", "deleteAll",
    ]

    /// Swift keywords, escaped with backticks when a property takes one as its name.
    static let keywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "enum", "extension", "fileprivate", "func", "import",
        "inout", "internal", "let", "nonisolated", "open", "operator", "precedencegroup", "private", "protocol",
        "public", "rethrows", "static", "struct", "typealias", "var", "break", "case", "catch", "continue", "default",
        "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "switch", "where",
        "while", "as", "await", "async", "is", "throw", "throws", "try", "any", "some", "actor", "macro", "package",
        "consume", "copy", "discard", "each", "indirect", "mutating", "nonmutating", "override", "required",
        "convenience", "dynamic", "final", "lazy", "optional", "weak", "unowned", "get", "set", "willSet", "didSet",
    ]

    /// Class names: the model's class name when it is a usable Swift name, else the entity's;
    /// never a name the generated code uses, never two equal ignoring case (file names).
    static func classNames(_ model: ManagedObjectModel) -> [String: String] {
        var names: [String: String] = [:]
        var used = Set<String>()
        for entity in model.entities {
            var candidate = sanitized(entity.name)
            if let represented = entity.representedClassName?.split(separator: ".").last.map(String.init),
                !represented.isEmpty, !represented.hasPrefix("NS"), sanitized(represented) == represented
            {
                candidate = represented
            }
            if typeNames.contains(candidate) || keywords.contains(candidate) || reservedMembers.contains(candidate)
                || used.contains(candidate.lowercased())
            {
                candidate = sanitized(entity.name) + "Object"
            }
            while used.contains(candidate.lowercased()) { candidate += "_" }
            used.insert(candidate.lowercased())
            names[entity.name] = candidate
        }
        return names
    }

    /// The Swift names of one entity's own members.
    struct Members {
        /// Property name → Swift declaration name (backticked when a keyword).
        var properties: [String: String] = [:]
        /// Fetched property name → Swift declaration name.
        var fetched: [String: String] = [:]
        /// To-many relationship name → (add method, remove method) base names.
        var accessors: [String: (add: String, remove: String)] = [:]
        /// Composite attribute name → the name of its nested struct; attributes with the same
        /// model-level composite and the same elements share one struct.
        var types: [String: String] = [:]
        /// The struct names in declaration order, each with the attribute describing it.
        var structs: [(name: String, attribute: AttributeDescription)] = []
    }

    /// Members of every entity, parents first so a subclass never redeclares what its superclass
    /// declares: each name is unique in its class hierarchy and shadows no class of the module.
    static func members(_ model: ManagedObjectModel, classNames: [String: String]) -> [String: Members] {
        let classes = Set(classNames.values)
        var taken: [String: Set<String>] = [:]
        var result: [String: Members] = [:]
        // Entities are numbered parents before children (ManagedObjectModel), so a parent's names are known.
        for entity in model.entities {
            var used = entity.superentityName.flatMap { taken[$0] } ?? []
            var members = Members()
            func unique(_ base: String) -> String {
                var name = base
                while used.contains(name) || classes.contains(name) || typeNames.contains(name)
                    || reservedMembers.contains(name)
                {
                    name += "_"
                }
                used.insert(name)
                return name
            }
            for property in entity.ownProperties {
                var name = sanitized(property.name)
                if reservedMembers.contains(name) || typeNames.contains(name) || classes.contains(name) {
                    name += "Value"
                }
                name = unique(name)
                members.properties[property.name] = keywords.contains(name) ? "`\(name)`" : name
                if let attribute = property.attribute, attribute.isComposite {
                    if let shared = members.structs.first(where: {
                        attribute.compositeName != nil && $0.attribute.compositeName == attribute.compositeName
                            && $0.attribute.elements == attribute.elements
                    }) {
                        members.types[property.name] = shared.name
                    } else {
                        var base = sanitized(attribute.compositeName ?? capitalized(attribute.name))
                        if keywords.contains(base) { base += "Value" }
                        let typeName = unique(base)
                        members.types[property.name] = typeName
                        members.structs.append((typeName, attribute))
                    }
                }
                if let relationship = property.relationship, relationship.isToMany {
                    let suffix = name.prefix(1).uppercased() + name.dropFirst()
                    members.accessors[property.name] = (unique("addTo" + suffix), unique("removeFrom" + suffix))
                }
            }
            for fetched in entity.fetchedProperties {
                var name = sanitized(fetched.name)
                if reservedMembers.contains(name) || typeNames.contains(name) || classes.contains(name) {
                    name += "Value"
                }
                name = unique(name)
                members.fetched[fetched.name] = keywords.contains(name) ? "`\(name)`" : name
            }
            taken[entity.name] = used
            result[entity.name] = members
        }
        return result
    }

    /// `name` with every character Swift does not allow in an identifier replaced by `_`, and a
    /// `_` in front when it starts with a digit; never empty.
    static func sanitized(_ name: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            out.append(scalar.properties.isXIDContinue || scalar == "_" ? scalar : "_")
        }
        var text = String(out)
        if let first = text.unicodeScalars.first, first != "_", !first.properties.isXIDStart { text = "_" + text }
        return text.isEmpty ? "_" : text
    }

    /// A Swift string literal whose value is `text`: quotes and backslashes escaped, `\n`, `\r`,
    /// `\t`, `\0` and every other control, format or line-separator character as an escape, so
    /// the literal is one line and shows no invisible character.
    static func literal(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\0": out += "\\0"
            default:
                out += isVisible(scalar) ? String(scalar) : "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return out + "\""
    }

    /// `text` for a `//` comment: line breaks and invisible characters escaped as `\u{…}` (and
    /// backslashes doubled so the escapes are unambiguous), so the text cannot end the comment.
    static func commentText(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                out += "\\\\"
            } else if isVisible(scalar) {
                out.unicodeScalars.append(scalar)
            } else {
                out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return out
    }

    /// Whether a character may be written as itself: not a control, format, separator (other than
    /// the space), private-use, surrogate or unassigned code point.
    private static func isVisible(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == " " { return true }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator, .privateUse, .surrogate,
            .unassigned:
            return false
        default:
            return true
        }
    }
}
