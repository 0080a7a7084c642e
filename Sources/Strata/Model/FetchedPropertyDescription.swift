/// A fetched property of an entity: a named, lazily evaluated query whose results belong to the
/// object (Core Data's `NSFetchedPropertyDescription`).
///
/// A fetched property is never stored and has no inverse; its predicate may use `$FETCH_SOURCE`
/// (the object holding the property) and `$FETCHED_PROPERTY` (this description). It takes no slot
/// in rows and does not take part in version hashes.
public struct FetchedPropertyDescription: Sendable, Hashable {
    /// The property's name, unique among the entity's properties and fetched properties.
    public var name: String
    /// The name of the entity the query fetches.
    public var entityName: String
    /// The query's predicate in NSPredicate format syntax (empty for every object of ``entityName``).
    public var predicateFormat: String
    /// Free-form key/value pairs.
    public var userInfo: [String: String]

    /// Creates a fetched property.
    ///
    /// - Parameters:
    ///   - name: The property's name.
    ///   - entityName: The entity fetched.
    ///   - predicateFormat: The predicate, in NSPredicate format syntax; empty for none.
    ///   - userInfo: Free-form key/value pairs.
    public init(_ name: String, entityName: String, predicateFormat: String = "", userInfo: [String: String] = [:]) {
        self.name = name
        self.entityName = entityName
        self.predicateFormat = predicateFormat
        self.userInfo = userInfo
    }
}
