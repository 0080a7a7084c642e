import Foundation
import Strata

/// Composite attributes in generated code: a nested struct per composite (one field per element,
/// nested composites as nested structs) and a property of that struct type that reads and writes
/// the elements through their key paths (`location.latitude`). The struct is `Hashable` and
/// `Sendable` unless an element is untyped (transformable).
extension CodeGenerator {
    /// Names a field of a generated composite struct cannot take (a `Value` suffix is added).
    static let reservedFields: Set<String> = [
        "init", "deinit", "subscript", "self", "Self", "super", "Type", "Protocol", "Any", "_", "true", "false", "nil",
        "write", "hash", "hashValue",
    ]

    /// The property of composite attribute `attribute` in an entity's class.
    static func compositeProperty(_ attribute: AttributeDescription, swiftName: String, typeName: String) -> String {
        let key = literal(attribute.name)
        let declared = attribute.compositeName.map { "composite `\(commentText($0))`, " } ?? ""
        var out =
            "    /// Composite attribute `\(commentText(attribute.name))` (\(declared)\(attribute.isOptional ? "optional" : "required")"
        out += "\(attribute.isTransient ? ", transient" : ""); `nil` when every element is `nil`).\n"
        out += "    /// Its elements are also reachable by key path (`\(commentText(attribute.name)).…`).\n"
        out += "    public var \(swiftName): \(typeName)? {\n"
        out += "        get { \(typeName)(self, at: \(key)) }\n"
        out += "        set { \(typeName).write(newValue, to: self, at: \(key)) }\n"
        out += "    }\n"
        return out
    }

    /// The struct holding a composite's value, declared at `indent`.
    static func compositeStruct(
        _ composite: AttributeDescription, typeName: String, outerNames: Set<String>, indent: String
    ) -> String {
        let typed = isTyped(composite)
        var fieldNames: [String] = []
        var taken: Set<String> = []
        for element in composite.elements {
            var name = sanitized(element.name)
            if reservedFields.contains(name) { name += "Value" }
            while taken.contains(name) { name += "_" }
            taken.insert(name)
            fieldNames.append(name)
        }
        var typeNames: [String?] = []
        var typesTaken = taken.union(outerNames).union([typeName]).union(Self.typeNames)
        for element in composite.elements {
            guard element.isComposite else {
                typeNames.append(nil)
                continue
            }
            var name = sanitized(element.compositeName ?? capitalized(element.name))
            while typesTaken.contains(name) || keywords.contains(name) { name += "_" }
            typesTaken.insert(name)
            typeNames.append(name)
        }
        func field(_ index: Int) -> String {
            keywords.contains(fieldNames[index]) ? "`\(fieldNames[index])`" : fieldNames[index]
        }
        /// An argument label: only `inout`, `var` and `let` need backticks there.
        func label(_ index: Int) -> String {
            ["inout", "var", "let"].contains(fieldNames[index]) ? "`\(fieldNames[index])`" : fieldNames[index]
        }
        func type(_ index: Int) -> String {
            let element = composite.elements[index]
            if let nested = typeNames[index] { return "\(nested)?" }
            guard let swift = swiftType(element.type) else { return "Any?" }
            return element.isOptional ? "\(swift)?" : swift
        }
        let i = indent
        var out =
            "\(i)/// The value of a `\(commentText(composite.compositeName ?? composite.name))` composite: one field per element.\n"
        out += "\(i)public struct \(typeName)\(typed ? ": Hashable, Sendable" : "") {\n"
        for (index, element) in composite.elements.enumerated() {
            let kind = element.isComposite ? "composite" : element.type.xcodeName
            out +=
                "\(i)    /// Element `\(commentText(element.name))` (\(kind)\(element.isOptional ? ", optional" : "")).\n"
            out += "\(i)    public var \(field(index)): \(type(index))\n"
        }
        // The memberwise initializer: elements without a value in Swift's sense default to nil.
        let parameters = composite.elements.indices.map { index -> String in
            let optional = type(index).hasSuffix("?")
            return "\(field(index)): \(type(index))\(optional ? " = nil" : "")"
        }
        out += "\n\(i)    /// Creates a value.\n"
        out += "\(i)    public init(\(parameters.joined(separator: ", "))) {\n"
        for index in composite.elements.indices { out += "\(i)        self.\(field(index)) = \(field(index))\n" }
        out += "\(i)    }\n"
        out += "\n\(i)    /// Reads the composite at key path `path` of `object`; `nil` when every element is `nil`.\n"
        out += "\(i)    public init?(_ object: ManagedObject, at path: String) {\n"
        for (index, element) in composite.elements.enumerated() {
            let elementPath = "path + \(literal("." + element.name))"
            if let nested = typeNames[index] {
                out += "\(i)        let e\(index) = \(nested)(object, at: \(elementPath))\n"
            } else if let swift = swiftType(element.type) {
                out += "\(i)        let e\(index): \(swift)? = object[\(elementPath)]\n"
            } else {
                out += "\(i)        let e\(index): Any? = object.value(forKey: \(elementPath))\n"
            }
        }
        let anyPresent = composite.elements.indices.map { "e\($0) != nil" }.joined(separator: " || ")
        out += "\(i)        guard \(anyPresent) else { return nil }\n"
        let arguments = composite.elements.indices.map { index -> String in
            let required = !type(index).hasSuffix("?")
            return "\(label(index)): e\(index)\(required ? " ?? .valueForNil" : "")"
        }
        out += "\(i)        self.init(\(arguments.joined(separator: ", ")))\n"
        out += "\(i)    }\n"
        out +=
            "\n\(i)    /// Writes `value` to the composite at key path `path` of `object`; `nil` clears every element.\n"
        out += "\(i)    public static func write(_ value: Self?, to object: ManagedObject, at path: String) {\n"
        for (index, element) in composite.elements.enumerated() {
            let elementPath = "path + \(literal("." + element.name))"
            if let nested = typeNames[index] {
                out += "\(i)        \(nested).write(value?.\(field(index)), to: object, at: \(elementPath))\n"
            } else if swiftType(element.type) != nil {
                out += "\(i)        object[\(elementPath)] = value?.\(field(index))\n"
            } else {
                out += "\(i)        object.setValue(value?.\(field(index)), forKey: \(elementPath))\n"
            }
        }
        out += "\(i)    }\n"
        for (index, element) in composite.elements.enumerated() {
            guard let nested = typeNames[index] else { continue }
            out += "\n" + compositeStruct(element, typeName: nested, outerNames: typesTaken, indent: i + "    ")
        }
        out += "\(i)}\n"
        return out
    }

    /// Whether every leaf element has a Swift type (so the struct can be `Hashable` and `Sendable`).
    static func isTyped(_ composite: AttributeDescription) -> Bool {
        composite.leafElements.allSatisfy { swiftType($0.attribute.type) != nil }
    }

    static func capitalized(_ name: String) -> String { name.prefix(1).uppercased() + name.dropFirst() }
}
