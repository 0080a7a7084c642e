import Foundation

/// A description of objects to fetch: an entity, a predicate, sort keys, paging and what to
/// return (Core Data's `NSFetchRequest`).
public struct FetchRequest: Sendable {
    /// The entity fetched.
    public var entityName: String
    /// Which objects match; `nil` for all.
    public var predicate: FetchPredicate?
    /// The order, most significant key first.
    public var sortKeys: [SortKey]
    /// The most objects returned; 0 for no limit.
    public var fetchLimit: Int = 0
    /// Matching objects to skip first.
    public var fetchOffset: Int = 0
    /// When positive, objects come back as faults filled this many at a time on first access,
    /// keeping memory bounded for large results.
    public var fetchBatchSize: Int = 0
    /// What the fetch returns.
    public var resultType: FetchResultType = .managedObject
    /// For dictionary results: the key paths and expressions to include (all attributes when
    /// `nil`). Key paths go through to-one relationships (`"department.name"`); expressions may be
    /// aggregates (see ``ExpressionDescription``).
    public var propertiesToFetch: [FetchProperty]?
    /// For dictionary results: the key paths whose distinct values form the groups that the
    /// aggregates of ``propertiesToFetch`` are computed over (Core Data's `propertiesToGroupBy`);
    /// every key path fetched must be one of them.
    public var propertiesToGroupBy: [FetchProperty]?
    /// For grouped dictionary results: which groups are returned (Core Data's `havingPredicate`).
    /// It reads the result's keys: grouped key paths and expression names (also as `$name`).
    public var havingPredicate: FetchPredicate?
    /// For dictionary results: whether equal dictionaries come back once (Core Data's
    /// `returnsDistinctResults`).
    public var returnsDistinctResults: Bool = false
    /// Whether objects of subentities match.
    public var includesSubentities: Bool = true
    /// Whether the context's unsaved inserts, updates and deletes are reflected in the results.
    public var includesPendingChanges: Bool = true
    /// Whether returned objects start as faults (their rows are in the row cache either way).
    public var returnsObjectsAsFaults: Bool = true
    /// Whether the rows' values are fetched with the objects (Core Data's `includesPropertyValues`).
    /// When `false`, only the IDs are fetched and objects not yet registered come back as faults
    /// that read their row when first used (in chunks of ``fetchBatchSize`` when it is set).
    public var includesPropertyValues: Bool = true
    /// Whether objects already registered and loaded take the fetched rows' values (Core Data's
    /// `shouldRefreshRefetchedObjects`); their unsaved changes stay on top. By default a loaded
    /// object keeps its values.
    public var shouldRefreshRefetchedObjects: Bool = false
    /// Relationship key paths whose destinations are loaded with the results.
    public var relationshipKeyPathsForPrefetching: [String] = []
    /// The stores to search; every store holding the entity when `nil`.
    public var affectedStores: [PersistentStore]?

    /// Creates a request for `entityName`.
    public init(entityName: String, predicate: FetchPredicate? = nil, sortKeys: [SortKey] = []) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortKeys = sortKeys
    }

    /// Creates a request from a model's template, substituting `$VARIABLES`
    /// (Core Data's `fetchRequestFromTemplate(withName:substitutionVariables:)`).
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` when the template does not exist;
    ///   ``FetchPredicateError`` when its predicate does not parse or a variable is missing.
    public init(
        template name: String, in model: ManagedObjectModel,
        substitutionVariables: [String: any PredicateArgument] = [:]
    ) throws {
        guard let template = model.fetchRequestTemplates[name] else {
            throw StoreError(.invalidRequest, "the model has no fetch request template named '\(name)'")
        }
        self.init(entityName: template.entityName)
        includesSubentities = template.includesSubentities
        resultType = template.resultType
        fetchLimit = template.fetchLimit
        fetchBatchSize = template.fetchBatchSize
        let format = template.predicateFormat.trimmingCharacters(in: .whitespaces)
        if !format.isEmpty {
            predicate = try FetchPredicate(format: format).withSubstitutionVariables(substitutionVariables)
        }
    }
}
