extension FetchPredicate {
    /// Checks the predicate against an entity before it is used in a fetch.
    ///
    /// Every key path must name properties of `entity`, through to-one relationships and at most
    /// one to-many relationship; `ANY`/`ALL`/`NONE` and collection operators need a to-many key
    /// path, and a to-many key path needs one of them (or `IN`/`CONTAINS`); constants must fit the
    /// attribute they are compared with (no string against a date); string operators need
    /// strings; a constant `MATCHES` pattern must compile.
    ///
    /// - Throws: ``FetchPredicateError`` with code ``FetchPredicateError/Code-swift.struct/unknownKeyPath``,
    ///   ``FetchPredicateError/Code-swift.struct/typeMismatch``, ``FetchPredicateError/Code-swift.struct/unsupported``
    ///   or ``FetchPredicateError/Code-swift.struct/invalidRegularExpression``, naming the entity.
    public func validate(for entity: EntityDescription, in model: ManagedObjectModel) throws {
        let validator = PredicateValidator(root: entity, model: model)
        try validator.validate(self)
    }
}

struct PredicateValidator {
    /// What the validator knows of an expression's value.
    enum Shape {
        case unknown
        /// Values of an attribute type (`many` when read through a to-many relationship).
        case attribute(AttributeType, many: Bool)
        /// Objects of an entity.
        case entity(EntityDescription, many: Bool)
        /// A constant.
        case constant(StoreValue)
        /// A number computed by an operator or function.
        case number

        var isMany: Bool {
            switch self {
            case .attribute(_, let many), .entity(_, let many): many
            default: false
            }
        }
    }

    let root: EntityDescription
    let model: ManagedObjectModel
    var variables: [String: Shape] = [:]

    init(root: EntityDescription, model: ManagedObjectModel) {
        self.root = root
        self.model = model
    }

    func validate(_ predicate: FetchPredicate) throws {
        switch predicate {
        case .constant: break
        case .not(let inner): try validate(inner)
        case .and(let parts), .or(let parts): for part in parts { try validate(part) }
        case .comparison(let comparison): try validate(comparison)
        }
    }

    func validate(_ comparison: ComparisonPredicate) throws {
        let lhs = try shape(comparison.lhs)
        let rhs = try shape(comparison.rhs)
        let op = comparison.op
        if comparison.modifier != .direct {
            if case .unknown = lhs {
            } else if !lhs.isMany {
                throw FetchPredicateError(
                    .typeMismatch,
                    "\(comparison.modifier.rawValue) needs a to-many key path, but \(comparison.lhs) on \(root) is not one"
                )
            }
        } else if lhs.isMany, op != .contains, !(op == .equal || op == .notEqual) || !rhs.isMany {
            throw FetchPredicateError(
                .typeMismatch,
                "\(comparison.lhs) on \(root) is a to-many key path; write ANY, ALL or NONE before the comparison, or use CONTAINS"
            )
        }
        if op == .in, comparison.modifier == .direct, case .attribute(_, many: false) = rhs {
            // `x IN name` is a substring test; only strings allow it.
            if case .attribute(let type, _) = rhs, type != .string {
                throw mismatch(comparison, "IN needs a collection")
            }
        }
        let rhsElements: [Shape]
        switch comparison.rhs {
        case .aggregate(let items) where op == .in || op == .between: rhsElements = try items.map(shape)
        default: rhsElements = [rhs]
        }
        for element in rhsElements { try checkCompatible(lhs, element, comparison) }
        if op == .contains, case .attribute(let type, false) = lhs, type != .string {
            throw mismatch(comparison, "CONTAINS needs a string or a to-many key path on its left")
        }
        if op.isStringOperator {
            for side in [lhs, rhs] {
                switch side {
                case .attribute(let type, _) where type != .string && type != .transformable:
                    throw mismatch(comparison, "\(op.rawValue) compares strings, but \(type.xcodeName) is not one")
                case .constant(let value) where !value.isNull && value.kindName != "string":
                    throw mismatch(
                        comparison, "\(op.rawValue) compares strings, but found \(value.kindName.withArticle)")
                case .entity:
                    throw mismatch(comparison, "\(op.rawValue) compares strings, but found a relationship")
                default: break
                }
            }
            if op == .matches, case .constant(.string(let pattern)) = rhs {
                _ = try PredicateStringMatching.regularExpression(
                    pattern, caseInsensitive: comparison.options.contains(.caseInsensitive))
            }
        }
    }

    func mismatch(_ comparison: ComparisonPredicate, _ reason: String) -> FetchPredicateError {
        FetchPredicateError(.typeMismatch, "\(FetchPredicate.comparison(comparison)) on \(root): \(reason)")
    }

    /// The kind of value a constant must be to compare with an attribute of `type`, or `nil` when any goes.
    static func family(_ type: AttributeType) -> String? {
        switch type {
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .boolean: "number"
        case .string: "string"
        case .date: "date"
        case .binaryData: "binary"
        case .uuid: "UUID"
        case .uri: "URI"
        default: nil
        }
    }

    static func family(_ value: StoreValue) -> String? {
        switch value {
        case .null: nil
        case .integer, .double, .decimal, .bool: "number"
        case .string: "string"
        case .date: "date"
        case .binary: "binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .reference, .references: "object reference"
        case .unfetched: nil
        }
    }

    func checkCompatible(_ lhs: Shape, _ rhs: Shape, _ comparison: ComparisonPredicate) throws {
        func describe(_ shape: Shape) -> (family: String, text: String)? {
            switch shape {
            case .attribute(let type, _): return Self.family(type).map { ($0, "\(type.xcodeName) attribute") }
            case .constant(let value): return Self.family(value).map { ($0, value.kindName) }
            case .entity(let entity, _): return ("object reference", "relationship to \(entity.name)")
            case .number: return ("number", "number")
            case .unknown: return nil
            }
        }
        if comparison.op.isStringOperator { return }
        // `"ab" IN name` and `name CONTAINS "b"` look for substrings.
        guard let left = describe(lhs), let right = describe(rhs) else { return }
        if left.family != right.family {
            throw mismatch(comparison, "cannot compare a \(left.text) with a \(right.text)")
        }
    }

    func shape(_ expression: FetchExpression) throws -> Shape {
        switch expression {
        case .constant(let value): return .constant(value)
        case .aggregate(let items):
            for item in items { _ = try shape(item) }
            return .unknown
        case .evaluatedObject: return .entity(root, many: false)
        case .keyPath(let path): return try walk(path, from: .entity(root, many: false), whole: path)
        case .member(let base, let path): return try walk(path, from: shape(base), whole: "\(expression)")
        case .variable(let name): return variables[name] ?? .unknown
        case .collection(let op, let collection, let path):
            let members = try shape(collection)
            if case .unknown = members { return op == .count ? .number : .unknown }
            guard members.isMany else {
                throw FetchPredicateError(
                    .typeMismatch, "\(op.rawValue) needs a to-many key path, but \(collection) on \(root) is not one")
            }
            if op == .count { return .number }
            var element = members
            if let path { element = try walk(path, from: single(members), whole: "\(expression)") }
            switch (op, single(element)) {
            case (.sum, .attribute(let type, _)), (.average, .attribute(let type, _)):
                guard type.isNumeric else {
                    throw FetchPredicateError(
                        .typeMismatch, "\(op.rawValue) adds numbers, but \(expression) on \(root) is \(type.xcodeName)")
                }
                return .number
            case (.min, let shape), (.max, let shape): return shape
            default: return .number
            }
        case .subquery(let collection, let variable, let predicate):
            let members = try shape(collection)
            if case .unknown = members {
            } else if !members.isMany {
                throw FetchPredicateError(
                    .typeMismatch, "SUBQUERY needs a to-many key path, but \(collection) on \(root) is not one")
            }
            var inner = self
            inner.variables[variable] = single(members)
            try inner.validate(predicate)
            return members
        case .function(let name, let arguments):
            let shapes = try arguments.map(shape)
            switch name {
            case "now": return .attribute(.date, many: false)
            case "uppercase:", "lowercase:", "canonical:": return .attribute(.string, many: false)
            case "castObject:toType:":
                if case .constant(.string(let type)) = shapes.last {
                    switch type {
                    case "NSDate": return .attribute(.date, many: false)
                    case "NSString": return .attribute(.string, many: false)
                    case "NSNumber", "NSDecimalNumber": return .number
                    default: return .unknown
                    }
                }
                return .unknown
            case "add:to:", "from:subtract:":
                for shape in shapes { if case .attribute(.date, false) = shape { return .unknown } }
                return .number
            case "noindex:": return shapes.first ?? .unknown
            default: return PredicateFunction.infix[name] != nil ? .number : .unknown
            }
        case .ternary(let condition, let a, let b):
            try validate(condition)
            _ = try shape(b)
            return try shape(a)
        }
    }

    func single(_ shape: Shape) -> Shape {
        switch shape {
        case .attribute(let type, _): .attribute(type, many: false)
        case .entity(let entity, _): .entity(entity, many: false)
        default: shape
        }
    }

    /// Follows a key path through the model.
    func walk(_ path: String, from start: Shape, whole: String) throws -> Shape {
        var current = start
        var pending = ""  // the key path of a composite read so far (`location`), waiting for an element
        for component in path.split(separator: ".") {
            var key = String(component)
            switch current {
            case .entity(let entity, let many):
                if !pending.isEmpty { key = pending + "." + key }
                if entity.property(named: key) == nil, entity.isComposite(key) {
                    // `location` or `location.address`: the next component names an element.
                    pending = key
                    continue
                }
                let composite = pending
                pending = ""
                guard let property = entity.property(named: key) else {
                    if !composite.isEmpty {
                        throw FetchPredicateError(
                            .unknownKeyPath,
                            "key path '\(whole)': composite '\(composite)' of \(entity) has no element '\(component)'")
                    }
                    throw FetchPredicateError(
                        .unknownKeyPath,
                        "key path '\(whole)': \(entity) has no property '\(key)'"
                            + (entity === root ? "" : " (in a predicate on \(root))"))
                }
                switch property {
                case .attribute(let attribute): current = .attribute(attribute.type, many: many)
                case .relationship(let relationship):
                    guard let destination = model.entity(named: relationship.destinationEntityName) else {
                        throw FetchPredicateError(
                            .unknownKeyPath, "key path '\(whole)': the destination of '\(key)' is not in the model")
                    }
                    if relationship.isToMany && many {
                        throw FetchPredicateError(
                            .unsupported,
                            "key path '\(whole)' on \(root) crosses two to-many relationships; use a SUBQUERY")
                    }
                    current = .entity(destination, many: many || relationship.isToMany)
                }
            case .attribute(let type, _):
                if type == .transformable || type == .undefined { return .unknown }
                throw FetchPredicateError(
                    .unknownKeyPath, "key path '\(whole)' on \(root): a \(type.xcodeName) attribute has no key '\(key)'"
                )
            case .unknown, .number, .constant: return .unknown
            }
        }
        // A whole composite (`location == nil`) has no scalar type to check.
        return pending.isEmpty ? current : .unknown
    }
}
