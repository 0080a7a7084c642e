import Foundation
import Strata

extension QueryTranslator {
    /// `ORDER BY` terms for sort keys, ending with the row-ID tie-break (`Z_ENT`, `Z_PK`) the core
    /// uses; `nil` when a key cannot be sorted exactly in SQL (case-insensitive or localized string
    /// order, URIs, relationships, or strings on a server without `normalize`).
    ///
    /// When the rows read are all of one entity (`oneEntity`), `Z_ENT` is the same in every row and
    /// the tie-break is `Z_PK` alone: the same order, which the server reads from the primary key's
    /// index as it sends rows, where `Z_ENT, Z_PK` makes it sort every row before sending the first.
    ///
    /// `nil` sorts first ascending and last descending (`NULLS FIRST` / `NULLS LAST`), as
    /// ``SortKey`` orders it; NaN sorts as `nil`, as the SQLite driver sorts it.
    mutating func orderBy(
        _ keys: [SortKey], _ entity: EntityDescription, _ alias: String, oneEntity: Bool = false
    ) -> [String]? {
        var terms: [String] = []
        for key in keys {
            guard case .value(let column)? = resolve(key.keyPath, entity, alias) else { return nil }
            switch (column.kind, key.comparison) {
            case (.string, .default) where strings: break
            case (.integer, _), (.double, _), (.decimal, _), (.date, _), (.uuid, _), (.binary, _): break
            default: return nil
            }
            terms.append("\(column.value) \(key.ascending ? "ASC NULLS FIRST" : "DESC NULLS LAST")")
        }
        if !oneEntity { terms.append("\(alias).\("Z_ENT".sqlName) ASC") }
        terms.append("\(alias).\("Z_PK".sqlName) ASC")
        return terms
    }
}
