/// What a fetch returns (Core Data's `NSFetchRequestResultType`, with its raw values).
public enum FetchResultType: Int, Sendable, Hashable {
    /// Managed objects.
    case managedObject = 0
    /// Object IDs only.
    case managedObjectID = 1
    /// Dictionaries of property values (see ``FetchRequest/propertiesToFetch``).
    case dictionary = 2
    /// The number of matching objects.
    case count = 4
}

/// What ``ManagedObjectContext/execute(_:)`` returns, by ``FetchRequest/resultType``.
public enum FetchResults {
    /// Managed objects.
    case objects([ManagedObject])
    /// Object IDs.
    case objectIDs([ManagedObjectID])
    /// Dictionaries of property values.
    case dictionaries([[String: Any]])
    /// A count.
    case count(Int)

    /// The objects, when the result holds objects.
    public var objects: [ManagedObject]? {
        if case .objects(let objects) = self { return objects }
        return nil
    }

    /// The object IDs, when the result holds IDs.
    public var objectIDs: [ManagedObjectID]? {
        if case .objectIDs(let ids) = self { return ids }
        return nil
    }
}
