import Foundation
import Strata

extension QueryTranslator {
    /// `ORDER BY` terms for sort keys, ending with the row-ID tie-break (`Z_ENT`, `Z_PK`) the core
    /// uses; `nil` when a key cannot be sorted exactly in SQL (localized comparison, Decimal,
    /// relationships) or store entity numbers do not order as the model's.
    ///
    /// - Parameter byEntity: Whether the tie-break starts with `Z_ENT`; false when every row the
    ///   query returns has one entity number, so that SQLite's sorter compares one key less.
    mutating func orderBy(
        _ keys: [SortKey], _ entity: EntityDescription, _ alias: String, byEntity: Bool = true
    ) -> [String]? {
        guard layout.numbersAreMonotone else { return nil }
        var terms: [String] = []
        for key in keys {
            guard case .value(let sql, let kind)? = resolve(key.keyPath, entity, alias) else { return nil }
            var term: String
            switch (kind, key.comparison) {
            case (.string, .default), (.uri, .default): term = "\(sql) COLLATE \(SQLiteFunctions.collation)"
            case (.string, .caseInsensitive):
                term =
                    "strata_fold(\(sql), \(ComparisonOptions.caseInsensitive.rawValue)) COLLATE \(SQLiteFunctions.collation)"
            case (.string, .localizedStandard), (.uri, _): return nil
            default: term = sql
            }
            term += key.ascending ? " ASC" : " DESC"
            terms.append(term)
        }
        if byEntity { terms.append("\(alias).Z_ENT ASC") }
        terms.append("\(alias).Z_PK ASC")
        return terms
    }
}
