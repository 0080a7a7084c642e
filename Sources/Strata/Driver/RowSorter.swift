/// Sorts rows by sort keys with the core's comparison semantics (shared by atomic drivers and the
/// coordinator when a driver did not sort).
public enum RowSorter {
    /// Returns `rows` sorted by `keys`, ties kept in row-ID order.
    public static func sort(
        _ rows: [RowSnapshot], by keys: [SortKey], model: ManagedObjectModel,
        lookup: @escaping (RowID) throws -> RowSnapshot?
    ) throws -> [RowSnapshot] {
        let views = rows.map { RowView($0, model: model, lookup: lookup) }
        var failure: (any Error)?
        let sorted = views.sorted { a, b in
            if failure != nil { return false }
            do {
                switch try SortKey.compare(a, b, by: keys) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: return a.row.id < b.row.id
                }
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return sorted.map(\.row)
    }
}
