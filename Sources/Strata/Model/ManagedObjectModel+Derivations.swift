import Foundation

extension AttributeDescription {
    /// The derivation expression of a derived attribute (Xcode's `derived="YES"`
    /// `derivationExpression="…"`, Core Data's `NSDerivedAttributeDescription`), or `nil` for an
    /// ordinary attribute.
    ///
    /// A derived attribute is stored like any other, and every save computes it from the
    /// expression (see docs/models.md, "Derived attributes").
    public var derivationExpression: String? { userInfo[Self.derivationExpressionUserInfoKey] }

    /// Whether the attribute is derived (``derivationExpression`` is set).
    public var isDerived: Bool { derivationExpression != nil }
}

extension ManagedObjectModel {
    /// The fetched property `name` of `entity` or of one of its ancestors, nearest first.
    public func fetchedProperty(named name: String, of entity: EntityDescription) -> FetchedPropertyDescription? {
        var current: EntityDescription? = entity
        var steps = 0
        while let here = current, steps <= entities.count {
            if let found = here.fetchedProperties.first(where: { $0.name == name }) { return found }
            current = here.superentityName.flatMap(entity(named:))
            steps += 1
        }
        return nil
    }

    /// The parsed predicate of a fetched property; `nil` for an empty one (every object).
    static func fetchedPredicate(_ property: FetchedPropertyDescription) throws -> FetchPredicate? {
        let format = property.predicateFormat.trimmingCharacters(in: .whitespacesAndNewlines)
        return format.isEmpty ? nil : try FetchPredicate(format: format)
    }

    /// The parsed derivation expression of a derived attribute, in Core Data's reading: a key path
    /// ending `.@count` or `.@sum…` is the collection operator, as the predicate parser reads it.
    static func derivation(_ text: String) throws -> FetchExpression {
        try FetchExpression(format: text)
    }

    /// Checks every fetched property's predicate (it must parse and name keys its entities have;
    /// a type mismatch is reported when the property is read, as Core Data does) and every
    /// derivation expression against the model, so a bad one stops the model from loading (with
    /// the file and line, when the model came from a file) instead of failing at first use.
    func checkDerivations() throws {
        for entity in entities {
            for fetched in entity.fetchedProperties {
                let element = "fetchedProperty \(entity.name).\(fetched.name)"
                // Checked by the resolver: the fetched entity exists.
                guard let target = self.entity(named: fetched.entityName) else { continue }
                do {
                    guard let predicate = try Self.fetchedPredicate(fetched) else { continue }
                    var validator = PredicateValidator(root: target, model: self)
                    validator.variables["FETCH_SOURCE"] = .entity(entity, many: false)
                    do {
                        try validator.validate(predicate)
                    } catch let error as FetchPredicateError where error.code != .unknownKeyPath {
                        // Core Data loads such a model and fails when the property is read; so
                        // does Strata (fetchedObjects(forKey:) throws, naming the property).
                    }
                } catch let error as FetchPredicateError {
                    throw ModelError(
                        .invalidValue,
                        "fetched property '\(entity.name).\(fetched.name)' has a predicate that cannot be used "
                            + "('\(fetched.predicateFormat)'): \(error.message); fix its predicateString "
                            + "($FETCH_SOURCE is the \(entity.name), key paths are read on \(target.name))",
                        element: element)
                }
            }
            // Inherited attributes are checked with the entity that declares them.
            let inherited = Set(entity.superentityName.flatMap(self.entity(named:))?.attributes.map(\.name) ?? [])
            for attribute in entity.attributes where !inherited.contains(attribute.name) {
                guard let text = attribute.derivationExpression else { continue }
                do {
                    try Self.checkDerivation(text, of: attribute, in: entity, model: self)
                } catch let error as FetchPredicateError {
                    throw ModelError(
                        .invalidValue,
                        "derived attribute '\(entity.name).\(attribute.name)' has a derivation expression that cannot be "
                            + "used ('\(text)'): \(error.message); use a key path (through to-one relationships), "
                            + "a to-many key path with @count or @sum, now(), or uppercase:, lowercase: or canonical: of a key path",
                        element: "attribute \(entity.name).\(attribute.name)")
                }
            }
        }
    }

    private static func checkDerivation(
        _ text: String, of attribute: AttributeDescription, in entity: EntityDescription, model: ManagedObjectModel
    ) throws {
        if text.trimmingCharacters(in: .whitespaces).isEmpty {
            throw FetchPredicateError(.syntax, "the expression is empty")
        }
        let expression = try derivation(text)
        let validator = PredicateValidator(root: entity, model: model)
        let shape = try validator.shape(expression)
        if case .attribute(_, many: true) = shape {
            throw FetchPredicateError(
                .typeMismatch, "it reads many values through a to-many relationship; end it with @count or @sum")
        }
        if case .entity = shape {
            throw FetchPredicateError(.typeMismatch, "it names a relationship, not a value")
        }
        if case .keyPath(let path) = expression, path == attribute.name {
            throw FetchPredicateError(.invalidArgument, "it derives the attribute from itself")
        }
    }
}
