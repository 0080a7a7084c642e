import Foundation

extension ModelArchive {
    /// One attribute or relationship: `kind` says which, the other fields follow the descriptions.
    struct Property: Codable {
        var kind: String
        var name: String
        var isOptional: Bool
        var isTransient: Bool
        var renamingIdentifier: String?
        var versionHashModifier: String?
        var userInfo: [String: String]
        // Attributes.
        var type: Int?
        var defaultValue: Value?
        var validation: Validation?
        var valueTransformerName: String?
        var valueClassName: String?
        var allowsExternalBinaryDataStorage: Bool?
        var isIndexed: Bool?
        // Composite attributes (version 2): the elements, and the model-level composite's name.
        var elements: [Property]?
        var composite: String?
        var preservesValueInHistoryOnDeletion: Bool?
        // Relationships.
        var destination: String?
        var inverse: String?
        var isToMany: Bool?
        var isOrdered: Bool?
        var minCount: Int?
        var maxCount: Int?
        var deleteRule: Int?

        init(_ property: PropertyDescription) {
            name = property.name
            isOptional = property.isOptional
            isTransient = property.isTransient
            switch property {
            case .attribute(let a):
                kind = "attribute"
                renamingIdentifier = a.renamingIdentifier
                versionHashModifier = a.versionHashModifier
                userInfo = a.userInfo
                type = a.type.rawValue
                defaultValue = Value(a.defaultValue)
                validation = Validation(a.validation)
                valueTransformerName = a.valueTransformerName
                valueClassName = a.valueClassName
                allowsExternalBinaryDataStorage = a.allowsExternalBinaryDataStorage
                isIndexed = a.isIndexed
                if a.isComposite {
                    elements = a.elements.map { Property(.attribute($0)) }
                    composite = a.compositeName
                }
                // Written only when set, so archives of models without it stay as they were.
                preservesValueInHistoryOnDeletion = a.preservesValueInHistoryOnDeletion ? true : nil
            case .relationship(let r):
                kind = "relationship"
                renamingIdentifier = r.renamingIdentifier
                versionHashModifier = r.versionHashModifier
                userInfo = r.userInfo
                destination = r.destinationEntityName
                inverse = r.inverseName
                isToMany = r.isToMany
                isOrdered = r.isOrdered
                minCount = r.minCount
                maxCount = r.maxCount
                deleteRule = r.deleteRule.rawValue
            }
        }

        func decoded(entity: String) throws -> PropertyDescription {
            func missing(_ field: String) -> ModelError {
                ModelError(.unreadable, "\(kind) '\(entity).\(name)' has no '\(field)'", element: "\(entity).\(name)")
            }
            switch kind {
            case "attribute":
                guard let raw = type else { throw missing("type") }
                guard let attributeType = AttributeType(rawValue: raw) else {
                    throw ModelError(
                        .unreadable, "attribute '\(entity).\(name)' has unknown type \(raw)",
                        element: "\(entity).\(name)")
                }
                var attribute = AttributeDescription(
                    name, attributeType, isOptional: isOptional, defaultValue: try defaultValue?.decoded() ?? .null,
                    isTransient: isTransient, validation: try validation?.decoded() ?? ValidationRules(),
                    valueTransformerName: valueTransformerName, valueClassName: valueClassName,
                    allowsExternalBinaryDataStorage: allowsExternalBinaryDataStorage ?? false,
                    isIndexed: isIndexed ?? false, renamingIdentifier: renamingIdentifier,
                    versionHashModifier: versionHashModifier, userInfo: userInfo,
                    preservesValueInHistoryOnDeletion: preservesValueInHistoryOnDeletion ?? false)
                if let elements {
                    // The model checks the elements (names, types, nesting) when it is built.
                    attribute.elements = try elements.map { element in
                        guard case .attribute(let decoded) = try element.decoded(entity: "\(entity).\(name)") else {
                            throw ModelError(
                                .unreadable,
                                "an element of composite attribute '\(entity).\(name)' is not an attribute",
                                element: "\(entity).\(name)")
                        }
                        return decoded
                    }
                }
                attribute.compositeName = composite
                return .attribute(attribute)
            case "relationship":
                guard let destination else { throw missing("destination") }
                guard let rule = DeleteRule(rawValue: deleteRule ?? DeleteRule.nullify.rawValue) else {
                    throw ModelError(
                        .unreadable, "relationship '\(entity).\(name)' has unknown delete rule \(deleteRule ?? -1)")
                }
                var relationship = RelationshipDescription(
                    name, destination: destination, inverse: inverse, toMany: isToMany ?? false,
                    ordered: isOrdered ?? false, isOptional: isOptional, isTransient: isTransient,
                    minCount: minCount ?? 0, maxCount: maxCount, deleteRule: rule,
                    renamingIdentifier: renamingIdentifier, versionHashModifier: versionHashModifier, userInfo: userInfo
                )
                relationship.isOrdered = isOrdered ?? false
                return .relationship(relationship)
            default:
                throw ModelError(.unreadable, "property '\(entity).\(name)' has unknown kind '\(kind)'")
            }
        }
    }

    struct Validation: Codable {
        var minimum: Value?
        var maximum: Value?
        var minimumLength: Int?
        var maximumLength: Int?
        var regularExpression: String?

        init(_ rules: ValidationRules) {
            minimum = rules.minimum.map(Value.init)
            maximum = rules.maximum.map(Value.init)
            minimumLength = rules.minimumLength
            maximumLength = rules.maximumLength
            regularExpression = rules.regularExpression
        }

        func decoded() throws -> ValidationRules {
            ValidationRules(
                minimum: try minimum?.decoded(), maximum: try maximum?.decoded(), minimumLength: minimumLength,
                maximumLength: maximumLength, regularExpression: regularExpression)
        }
    }

    /// A ``StoreValue`` with its case and an exact text form.
    struct Value: Codable {
        var kind: String
        var text: String?
        var ids: [String]?

        init(_ value: StoreValue) {
            switch value {
            case .null: kind = "null"
            case .integer(let i): (kind, text) = ("integer", String(i))
            case .double(let d): (kind, text) = ("double", d.description)
            case .decimal(let d): (kind, text) = ("decimal", d.description)
            case .string(let s): (kind, text) = ("string", s)
            case .bool(let b): (kind, text) = ("bool", b ? "true" : "false")
            case .date(let d): (kind, text) = ("date", d.timeIntervalSinceReferenceDate.description)
            case .binary(let data): (kind, text) = ("binary", data.base64EncodedString())
            case .uuid(let u): (kind, text) = ("uuid", u.uuidString)
            case .uri(let u): (kind, text) = ("uri", u.absoluteString)
            case .reference(let id): (kind, text) = ("reference", id.description)
            case .references(let rows): (kind, ids) = ("references", rows.map(\.description))
            case .unfetched: kind = "unfetched"
            }
        }

        func decoded() throws -> StoreValue {
            let bad = ModelError(.unreadable, "a \(kind) value '\(text ?? "")' in the model does not decode")
            switch kind {
            case "null": return .null
            case "unfetched": return .unfetched
            case "references": return .references(try (ids ?? []).map { try Self.rowID($0) ?? { throw bad }() })
            default: break
            }
            guard let text else { throw bad }
            switch kind {
            case "integer": return try Int64(text).map(StoreValue.integer) ?? { throw bad }()
            case "double": return try Double(text).map(StoreValue.double) ?? { throw bad }()
            case "decimal":
                return try Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map(StoreValue.decimal)
                    ?? { throw bad }()
            case "string": return .string(text)
            case "bool": return .bool(text == "true")
            case "date":
                return try Double(text).map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? { throw bad }()
            case "binary": return try Data(base64Encoded: text).map(StoreValue.binary) ?? { throw bad }()
            case "uuid": return try UUID(uuidString: text).map(StoreValue.uuid) ?? { throw bad }()
            case "uri": return try URL(string: text).map(StoreValue.uri) ?? { throw bad }()
            case "reference": return try Self.rowID(text).map(StoreValue.reference) ?? { throw bad }()
            default: throw bad
            }
        }

        /// Parses ``RowID/description`` (`"3/p12"`).
        static func rowID(_ text: String) -> RowID? {
            let parts = text.split(separator: "/")
            guard parts.count == 2, let entity = Int32(parts[0]), parts[1].hasPrefix("p"),
                let key = Int64(parts[1].dropFirst())
            else { return nil }
            return RowID(entity: entity, primaryKey: key)
        }
    }
}
