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
    /// Absent `optional` means required. Defaults and limits are parsed for the attribute's type
    /// (see ``ModelDefaultValues``). Composite attributes are refused with a ``ModelError``
    /// `.invalidValue`: Strata has no composite type yet, and flattening them silently would
    /// change the model's shape behind the caller's back.
    mutating func attribute(_ element: ModelXMLElement, entity: String) throws -> AttributeDescription {
        let name = try required("name", of: element, label: "attribute", what: "an <attribute> of entity '\(entity)'")
        try checkName(name, kind: "attribute", owner: entity, element)
        let label = "attribute \(entity).\(name)"
        contents.lines[label] = element.line
        let typeName = try required("attributeType", of: element, label: label, what: "attribute '\(entity).\(name)'")
        guard let type = AttributeType(xcodeName: typeName) else {
            if typeName == "Composite" {
                throw error(
                    .invalidValue,
                    "attribute '\(entity).\(name)' is a composite attribute (composite '\(element["composite"] ?? "?")'), which Strata does not support yet; replace it with one attribute per composite element",
                    element, label)
            }
            let known = AttributeType.allCases.map { "'\($0.xcodeName)'" }.joined(separator: ", ")
            throw error(
                .invalidValue, "attribute '\(entity).\(name)' has unknown attributeType '\(typeName)' (expected one of \(known))",
                element, label)
        }
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
            versionHashModifier: nonEmpty(element["versionHashModifier"]), userInfo: info)
    }

    private func defaultValue(_ element: ModelXMLElement, _ type: AttributeType, _ label: String) throws -> StoreValue {
        if type == .date, element["defaultDateTimeInterval"] != nil {
            return .date(try value("defaultDateTimeInterval", of: element, label, ModelDefaultValues.date))
        }
        guard element["defaultValueString"] != nil else { return .null }
        return try value("defaultValueString", of: element, label) { (text) throws(ModelDefaultValues.Reason) in
            try ModelDefaultValues.defaultValue(text, for: type)
        }
    }

    private func validation(_ element: ModelXMLElement, _ type: AttributeType, _ label: String) throws -> ValidationRules {
        var rules = ValidationRules()
        rules.regularExpression = nonEmpty(element["regularExpressionString"])
        switch type {
        case .string, .binaryData:
            // For strings and binary data Xcode's minimum and maximum are lengths.
            rules.minimumLength = try optionalValue("minValueString", of: element, label, ModelDefaultValues.length)
            rules.maximumLength = try optionalValue("maxValueString", of: element, label, ModelDefaultValues.length)
        default:
            let limit = { (text: String) throws(ModelDefaultValues.Reason) -> StoreValue in
                try ModelDefaultValues.limit(text, for: type)
            }
            rules.minimum = try optionalValue("minValueString", of: element, label, limit)
            rules.maximum = try optionalValue("maxValueString", of: element, label, limit)
        }
        for key in ["minDateTimeInterval", "maxDateTimeInterval"] where element[key] != nil {
            guard type == .date else {
                throw error(.invalidValue, "\(key) applies to Date attributes, not to \(type.xcodeName)", element, label)
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
            throw self.error(.invalidValue, "\(key) '\(text)' does not fit: \(error.text)", element, label)
        }
    }
}
