/// Row IDs met so far, so a driver hands each row over once (a many-to-many member of several
/// sources, say): looked along while there are a few, as a to-many fault's ten or so members
/// are (a look along them costs less than making a set), in a set once there are more.
package struct SeenRowIDs {
    /// IDs looked along until there are more than ``linearLimit``.
    private var few: [RowID] = []
    /// Every ID met, once there were more than ``linearLimit``.
    private var many = Set<RowID>()

    /// The most IDs looked along before a set takes over.
    package static var linearLimit: Int { 16 }

    /// Creates an empty record.
    package init() {}

    /// Records `id`; returns whether it was met for the first time.
    package mutating func insert(_ id: RowID) -> Bool {
        guard many.isEmpty else { return many.insert(id).inserted }
        if few.contains(id) { return false }
        few.append(id)
        if few.count > Self.linearLimit {
            many = Set(few)
            few = []
        }
        return true
    }
}
