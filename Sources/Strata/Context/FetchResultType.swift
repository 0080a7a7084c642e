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
