import Foundation

/// A dictionary fetch checked against the model: what each result key holds, whether rows are
/// grouped, and what a driver may compute (``StoreAggregation``).
struct DictionaryFetchPlan {
    /// What a key path ends in.
    enum Target {
        case attribute(AttributeDescription)
        /// A composite attribute of the root entity, read as a dictionary of its elements.
        case composite(AttributeDescription)
        case toOne
        case toMany
    }

    /// One result key.
    enum Column {
        /// The value of a key path.
        case value(name: String, keyPath: String, target: Target)
        /// An aggregate; `index` is its position in ``aggregation``'s aggregates.
        case aggregate(name: String, index: Int, resultType: AttributeType?, inputType: AttributeType?)

        var name: String {
            switch self {
            case .value(let name, _, _), .aggregate(let name, _, _, _): name
            }
        }
    }

    let entity: EntityDescription
    let model: ManagedObjectModel
    /// The keys of each result dictionary, in request order.
    let columns: [Column]
    /// Whether rows are grouped (aggregates, `propertiesToGroupBy` or distinct results).
    let grouped: Bool
    /// The group keys and aggregates, when grouped.
    let aggregation: StoreAggregation
    /// The name each group key is read under by the having predicate and sort keys.
    let groupNames: [String]
    /// What each group key path ends in.
    let groupTargets: [Target]

    /// Checks `request` against `entity`.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` naming the entity and the key for an unknown key
    ///   path, an aggregate over something it cannot aggregate, a fetched key that is neither
    ///   grouped nor aggregated, a having predicate or sort key reading an ungrouped key, or grouping
    ///   without `propertiesToFetch`; ``StoreError/Code/unsupported`` for an expression that is
    ///   neither a key path nor an aggregate of one.
    init(_ request: FetchRequest, entity: EntityDescription, model: ManagedObjectModel) throws {
        self.entity = entity
        self.model = model
        let fetched =
            request.propertiesToFetch
            ?? entity.attributes.filter { !$0.isTransient }.map { FetchProperty.keyPath($0.name) }
        let groupBy = request.propertiesToGroupBy ?? []
        var aggregates: [StoreAggregation.Aggregate] = []
        var columns: [Column] = []
        var names = Set<String>()
        for property in fetched {
            guard names.insert(property.name).inserted else {
                throw Self.invalid(
                    entity, "propertiesToFetch names '\(property.name)' twice; give each expression its own name")
            }
            switch Self.parse(property) {
            case .keyPath(let path):
                columns.append(
                    .value(
                        name: property.name, keyPath: path,
                        target: try Self.target(path, entity, model, "propertiesToFetch")))
            case .aggregate(let function, let path):
                var inputType: AttributeType?
                if let path {
                    let target = try Self.target(path, entity, model, "propertiesToFetch")
                    if case .composite = target {
                        throw Self.invalid(
                            entity,
                            "\(function.selector) of '\(path)': '\(path)' is a composite attribute; aggregate one of its elements (\(path).\(target.firstElementName))"
                        )
                    }
                    guard case .attribute(let attribute) = target else {
                        throw Self.invalid(
                            entity,
                            "\(function.selector) of '\(path)': '\(path)' is a relationship; aggregate one of its attributes (\(path).name)"
                        )
                    }
                    try Self.check(function, over: attribute, path: path, entity: entity)
                    inputType = attribute.type
                }
                var resultType: AttributeType?
                if case .expression(let description) = property { resultType = description.resultType }
                columns.append(
                    .aggregate(
                        name: property.name, index: aggregates.count, resultType: resultType, inputType: inputType))
                aggregates.append(StoreAggregation.Aggregate(function, keyPath: path, type: inputType))
            case .unsupported(let expression):
                throw StoreError(
                    .unsupported,
                    "propertiesToFetch of '\(entity.name)': '\(property.name)' is \(expression), which is neither a key path nor an aggregate (count:, sum:, average:, min:, max:) of one"
                )
            }
        }
        var groupPaths: [String] = []
        var groupNames: [String] = []
        var groupTargets: [Target] = []
        for property in groupBy {
            guard case .keyPath(let path) = Self.parse(property) else {
                throw Self.invalid(
                    entity,
                    "propertiesToGroupBy: '\(property.name)' is not a key path; group by attributes or to-one relationships"
                )
            }
            let target = try Self.target(path, entity, model, "propertiesToGroupBy")
            if case .composite = target {
                throw Self.invalid(
                    entity,
                    "propertiesToGroupBy: '\(path)' is a composite attribute; group by its elements (\(path).\(target.firstElementName))"
                )
            }
            if case .toMany = target {
                throw Self.invalid(
                    entity,
                    "propertiesToGroupBy: '\(path)' is a to-many relationship; group by attributes or to-one relationships"
                )
            }
            groupPaths.append(path)
            groupNames.append(property.name)
            groupTargets.append(target)
        }
        if request.propertiesToGroupBy != nil && request.propertiesToFetch == nil {
            throw Self.invalid(
                entity,
                "propertiesToGroupBy needs propertiesToFetch: name the grouped key paths and aggregates to return")
        }
        var grouped = !aggregates.isEmpty || !groupBy.isEmpty
        if grouped {
            for case .value(let name, let path, _) in columns where !groupPaths.contains(path) {
                throw Self.invalid(
                    entity,
                    "propertiesToFetch names '\(name)', which is neither in propertiesToGroupBy nor an aggregate; group by '\(path)' or aggregate it"
                )
            }
        } else if request.returnsDistinctResults {
            // Distinct rows are the groups of every fetched key path.
            for case .value(let name, let path, let target) in columns {
                if case .toMany = target {
                    throw Self.invalid(
                        entity,
                        "returnsDistinctResults: '\(path)' is a to-many relationship, which distinct results cannot compare"
                    )
                }
                if case .composite = target {
                    throw Self.invalid(
                        entity,
                        "returnsDistinctResults: '\(path)' is a composite attribute; fetch its elements (\(path).\(target.firstElementName)) to compare them"
                    )
                }
                groupPaths.append(path)
                groupNames.append(name)
                groupTargets.append(target)
            }
            grouped = true
        }
        if grouped {
            for case .value(_, let path, .toMany) in columns {
                throw Self.invalid(entity, "'\(path)' is a to-many relationship, which grouped results cannot hold")
            }
        }
        self.columns = columns
        self.grouped = grouped
        self.aggregation = StoreAggregation(groupBy: groupPaths, aggregates: aggregates)
        self.groupNames = groupNames
        self.groupTargets = groupTargets
        if let having = request.havingPredicate {
            guard grouped else {
                throw Self.invalid(
                    entity, "havingPredicate needs propertiesToGroupBy (or aggregates): it filters groups, not objects")
            }
            try checkResultKeys(having.keyPaths, Self.variables(of: having), what: "havingPredicate")
        }
        if grouped {
            try checkResultKeys(Set(request.sortKeys.map(\.keyPath)), [], what: "sort key")
        }
    }

    /// The names a grouped result can be read by: group key names and paths, and column names.
    var resultKeys: Set<String> { Set(groupNames + aggregation.groupBy + columns.map(\.name)) }

    private func checkResultKeys(_ paths: Set<String>, _ variables: Set<String>, what: String) throws {
        let known = resultKeys
        let expressions = Set(
            columns.compactMap { column -> String? in
                if case .aggregate(let name, _, _, _) = column { return name }
                return nil
            })
        for path in paths.sorted() where !known.contains(path) {
            throw Self.invalid(
                entity,
                "\(what) reads '\(path)', which is neither grouped nor the name of a fetched expression; add it to propertiesToGroupBy or aggregate it (known: \(known.sorted().joined(separator: ", ")))"
            )
        }
        for name in variables.sorted() where !expressions.contains(name) {
            throw Self.invalid(
                entity, "\(what) reads '$\(name)', which names no aggregate expression of propertiesToFetch")
        }
    }

    // MARK: Checks

    private enum Parsed {
        case keyPath(String)
        case aggregate(AggregateFunction, String?)
        case unsupported(FetchExpression)
    }

    private static func parse(_ property: FetchProperty) -> Parsed {
        switch property {
        case .keyPath(let path): return .keyPath(path)
        case .expression(let description):
            switch description.expression {
            case .keyPath(let path): return .keyPath(path)
            case .function(let selector, let arguments):
                guard let function = AggregateFunction(selector: selector), arguments.count == 1 else {
                    return .unsupported(description.expression)
                }
                switch arguments[0] {
                case .keyPath(let path): return .aggregate(function, path)
                case .evaluatedObject where function == .count: return .aggregate(.count, nil)
                default: return .unsupported(description.expression)
                }
            default: return .unsupported(description.expression)
            }
        }
    }

    private static func target(_ path: String, _ entity: EntityDescription, _ model: ManagedObjectModel, _ what: String)
        throws -> Target
    {
        if let composite = entity.compositeAttribute(atKeyPath: path) { return .composite(composite) }
        let validator = PredicateValidator(root: entity, model: model)
        let shape: PredicateValidator.Shape
        do {
            shape = try validator.walk(path, from: .entity(entity, many: false), whole: path)
            // Every step but the last must be to-one.
            if let dot = path.lastIndex(of: "."), !entity.properties.contains(where: { $0.name == path }) {
                let prefix = String(path[..<dot])
                if try validator.walk(prefix, from: .entity(entity, many: false), whole: path).isMany {
                    throw invalid(
                        entity,
                        "\(what): '\(path)' goes through a to-many relationship; only key paths through to-one relationships can be fetched, grouped or aggregated"
                    )
                }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw invalid(entity, "\(what) names '\(path)', which '\(entity.name)' does not have (\(error))")
        }
        switch shape {
        case .entity(_, let many): return many ? .toMany : .toOne
        case .attribute:
            guard let attribute = Self.attribute(at: path, entity, model) else {
                throw invalid(entity, "\(what) names '\(path)', which '\(entity.name)' does not have")
            }
            return .attribute(attribute)
        default:
            throw invalid(
                entity, "\(what) names '\(path)', which is not an attribute or relationship of '\(entity.name)'")
        }
    }

    /// The attribute a key path through to-one relationships ends in.
    static func attribute(at path: String, _ entity: EntityDescription, _ model: ManagedObjectModel)
        -> AttributeDescription?
    {
        if let attribute = entity.attributesByName[path] { return attribute }
        var current = entity
        let components = path.split(separator: ".").map(String.init)
        for (position, key) in components.enumerated() {
            let rest = components[position...].joined(separator: ".")
            if let attribute = current.attributesByName[rest] { return attribute }
            guard let relationship = current.relationshipsByName[key],
                let next = model.entity(named: relationship.destinationEntityName)
            else { return nil }
            current = next
        }
        return nil
    }

    private static func check(
        _ function: AggregateFunction, over attribute: AttributeDescription, path: String, entity: EntityDescription
    ) throws {
        let type = attribute.type
        switch function {
        case .count: return
        case .sum, .average:
            guard type.isNumeric || type == .boolean else {
                throw invalid(
                    entity,
                    "\(function.selector) of '\(path)' adds numbers, but '\(path)' is a \(type.xcodeName) attribute")
            }
        case .min, .max:
            guard type.isNumeric || [.boolean, .string, .date].contains(type) else {
                throw invalid(
                    entity,
                    "\(function.selector) of '\(path)' needs numbers, strings or dates, but '\(path)' is a \(type.xcodeName) attribute"
                )
            }
        }
    }

    private static func invalid(_ entity: EntityDescription, _ message: String) -> StoreError {
        StoreError(.invalidRequest, "dictionary fetch of '\(entity.name)': \(message)")
    }

    /// The `$variables` a predicate reads (outside subqueries, which bind their own).
    static func variables(of predicate: FetchPredicate) -> Set<String> {
        var names = Set<String>()
        func visit(_ predicate: FetchPredicate) {
            switch predicate {
            case .constant: break
            case .not(let inner): visit(inner)
            case .and(let parts), .or(let parts): parts.forEach(visit)
            case .comparison(let c):
                visit(c.lhs)
                visit(c.rhs)
            }
        }
        func visit(_ expression: FetchExpression) {
            switch expression {
            case .variable(let name): names.insert(name)
            case .constant, .evaluatedObject, .keyPath, .subquery: break
            case .aggregate(let items): items.forEach(visit)
            case .member(let base, _): visit(base)
            case .collection(_, let base, _): visit(base)
            case .function(_, let arguments): arguments.forEach(visit)
            case .ternary(let condition, let a, let b):
                visit(condition)
                visit(a)
                visit(b)
            }
        }
        visit(predicate)
        return names
    }
}

extension DictionaryFetchPlan.Target {
    /// A composite's first element name, for messages that suggest one (`element` otherwise).
    var firstElementName: String {
        if case .composite(let attribute) = self, let first = attribute.elements.first { return first.name }
        return "element"
    }
}
