import Foundation

extension AttributeDescription {
    /// The ``userInfo`` key under which the model loader keeps a derived attribute's derivation
    /// expression (`"strata.derivationExpression"`).
    ///
    /// Strata loads derived attributes (Xcode's `derived="YES"`) as ordinary stored attributes and
    /// does not evaluate the expression; code that wants to may read it from here.
    public static let derivationExpressionUserInfoKey = "strata.derivationExpression"
}

extension ModelContentsDecoder {
    /// Decodes an `<attribute>` of entity `entity`.
    ///
    /// Absent `optional` means required. Defaults and limits are read for the attribute's type
    /// (see ``ModelDefaultValues``): a default that does not read as the type is dropped with a
    /// warning; a limit that does not parse is an error (ignoring it would accept values the model
    /// forbids), while a limit on a type that takes none is dropped with a warning. A composite
    /// attribute takes its elements from the model-level `<composite>` it names
    /// (`ModelContentsDecoder+Composites.swift`).
    mutating func attribute(_ element: ModelXMLElement, entity: String) throws -> AttributeDescription {
        let name = try required("name", of: element, label: "attribute", what: "an <attribute> of entity '\(entity)'")
        try checkName(name, kind: "attribute", owner: entity, element)
        let label = "attribute \(entity).\(name)"
        contents.lines[label] = element.line
        let typeName = try required("attributeType", of: element, label: label, what: "attribute '\(entity).\(name)'")
        guard let type = AttributeType(xcodeName: typeName) else {
            let known = AttributeType.allCases.map { "'\($0.xcodeName)'" }.joined(separator: ", ")
            throw error(
                .invalidValue,
                "attribute '\(entity).\(name)' has unknown attributeType '\(typeName)' (expected one of \(known))",
                element, label)
        }
        checkVocabulary(of: element, label)
        if type == .composite { return try compositeAttribute(element, name: name, entity: entity, label: label) }
        var info = try userInfo(of: element)
        if element.flag("derived") {
            info[AttributeDescription.derivationExpressionUserInfoKey] = element["derivationExpression"] ?? ""
        }
        return AttributeDescription(
            name, type, isOptional: element.flag("optional"), defaultValue: try defaultValue(element, type, label),
            isTransient: element.flag("transient"), validation: try validation(element, type, label),
            valueTransformerName: nonEmpty(element["valueTransformerName"]),
            valueClassName: nonEmpty(element["customClassName"]),
            allowsExternalBinaryDataStorage: element.flag("allowsExternalBinaryDataStorage"),
            isIndexed: element.flag("indexed"), renamingIdentifier: nonEmpty(element["elementID"]),
            versionHashModifier: nonEmpty(element["versionHashModifier"]), userInfo: info,
            preservesValueInHistoryOnDeletion: element.flag("preserveAfterDeletion"))
    }

    /// The default: Date attributes take `defaultDateTimeInterval`, the others `defaultValueString`.
    private mutating func defaultValue(_ element: ModelXMLElement, _ type: AttributeType, _ label: String) throws
        -> StoreValue
    {
        if type == .date, element["defaultDateTimeInterval"] != nil {
            return .date(try value("defaultDateTimeInterval", of: element, label, ModelDefaultValues.date))
        }
        guard let text = element["defaultValueString"] else { return .null }
        switch ModelDefaultValues.defaultValue(text, for: type) {
        case .value(let value): return value
        case .adjusted(let value, let note):
            warn("defaultValueString '\(text)' \(note)", element, label)
            return value
        case .dropped(let reason):
            warn("defaultValueString '\(text)' is not used: \(reason); the attribute has no default", element, label)
            return .null
        }
    }

    private mutating func validation(_ element: ModelXMLElement, _ type: AttributeType, _ label: String) throws
        -> ValidationRules
    {
        var rules = ValidationRules()
        rules.regularExpression = nonEmpty(element["regularExpressionString"])
        switch type {
        case .string, .binaryData:
            // For strings and binary data Xcode's minimum and maximum are lengths.
            rules.minimumLength = try optionalValue("minValueString", of: element, label, ModelDefaultValues.length)
            rules.maximumLength = try optionalValue("maxValueString", of: element, label, ModelDefaultValues.length)
        case .integer16, .integer32, .integer64, .decimal, .double, .float:
            let limit = { (text: String) throws(ModelDefaultValues.Reason) -> StoreValue in
                try ModelDefaultValues.limit(text, for: type)
            }
            rules.minimum = try optionalValue("minValueString", of: element, label, limit)
            rules.maximum = try optionalValue("maxValueString", of: element, label, limit)
        case .date:
            // Xcode writes a Date's limits as seconds since 2001 in min/maxDateTimeInterval, beside
            // display strings (`minValueString="12/4/2013"`) in the editor's locale: those are never read.
            for key in ["minValueString", "maxValueString"] {
                let interval = key == "minValueString" ? "minDateTimeInterval" : "maxDateTimeInterval"
                if let text = element[key], element[interval] == nil {
                    warn(
                        "\(key) '\(text)' is a display string without \(interval); the limit is not used (set it again in Xcode to write \(interval))",
                        element, label)
                }
            }
        default:
            for key in ["minValueString", "maxValueString"] {
                if let text = element[key] {
                    warn("\(key) '\(text)' is not used: a \(type.xcodeName) attribute takes no limit", element, label)
                }
            }
        }
        for key in ["minDateTimeInterval", "maxDateTimeInterval"] where element[key] != nil {
            guard type == .date else {
                warn("\(key) is not used: it applies to Date attributes, not to \(type.xcodeName)", element, label)
                continue
            }
            let date = StoreValue.date(try value(key, of: element, label, ModelDefaultValues.date))
            if key == "minDateTimeInterval" { rules.minimum = date } else { rules.maximum = date }
        }
        return rules
    }

    private func optionalValue<T>(
        _ key: String, of element: ModelXMLElement, _ label: String,
        _ convert: (String) throws(ModelDefaultValues.Reason) -> T
    ) throws -> T? {
        guard element[key] != nil else { return nil }
        return try value(key, of: element, label, convert)
    }

    /// The attribute `key` of `element` (which must be present) converted by `convert`; a failed
    /// conversion becomes a ``ModelError`` `.invalidValue` at the element's line.
    private func value<T>(
        _ key: String, of element: ModelXMLElement, _ label: String,
        _ convert: (String) throws(ModelDefaultValues.Reason) -> T
    ) throws -> T {
        let text = element[key] ?? ""
        do {
            return try convert(text)
        } catch {
            throw self.error(
                .invalidValue, "\(key) '\(text)' does not fit: \(error.text); correct it in Xcode's model editor",
                element,
                label)
        }
    }
}
