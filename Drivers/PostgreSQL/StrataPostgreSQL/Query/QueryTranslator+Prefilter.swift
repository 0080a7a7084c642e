import Foundation
import Strata

// Prefilters: conditions the server checks for predicates it cannot answer exactly, that every
// matching row passes (a superset). The driver then runs the evaluator on the rows that pass.
//
// String operators and [c]/[d] comparisons are exact in SQL on *plain ASCII* text: bytes 0x02–0x7F
// but carriage return. There every character is one scalar and one Swift Character (a carriage
// return followed by a line feed would be one Character of two scalars), the core's case folding
// is ASCII lower-casing and its diacritic folding changes nothing (PostgreSQLPushdownTests checks
// both against Foundation), and stored text equals the string (no escape byte 0x01). Other rows
// pass the prefilter and are left to the evaluator:
//
//   CASE WHEN col ~ '^[\x02-\x0c\x0e-\x7f]*$' THEN <exact test on ASCII> ELSE TRUE END
//
// A prefilter is only sound where a wider condition gives a wider result: in AND, OR and ANY, never
// under NOT or ALL.

extension QueryTranslator {
    /// The pattern of plain ASCII text (see above).
    static let plainASCII = "^[\\x02-\\x0c\\x0e-\\x7f]*$"

    /// A condition every row matching `predicate` satisfies, or `nil` when there is none worth
    /// sending; used for parts that do not translate exactly.
    mutating func superset(_ predicate: FetchPredicate, _ entity: EntityDescription, _ alias: String) -> String? {
        guard strings, nesting < Self.maximumNesting else { return nil }
        switch predicate {
        case .and(let parts):
            var sql: [String] = []
            for part in parts {
                if let clause = attempt({ $0.translate(part, entity, alias) })
                    ?? attempt({ $0.superset(part, entity, alias) })
                {
                    sql.append(clause)
                }
            }
            return sql.isEmpty ? nil : Self.balanced(sql, "AND")
        case .or(let parts):
            var sql: [String] = []
            for part in parts {
                guard
                    let clause = attempt({ $0.translate(part, entity, alias) })
                        ?? attempt({ $0.superset(part, entity, alias) })
                else { return nil }
                sql.append(clause)
            }
            return sql.isEmpty ? nil : Self.balanced(sql, "OR")
        case .comparison(let c):
            return stringPrefilter(c, entity, alias)
        case .constant, .not:
            return nil
        }
    }

    private mutating func stringPrefilter(_ c: ComparisonPredicate, _ entity: EntityDescription, _ alias: String)
        -> String?
    {
        guard case .keyPath(let path) = c.lhs, c.modifier != .all else { return nil }
        if c.modifier == .any {
            // ANY: some member passes the member's prefilter.
            guard case .toMany(let owner, let slot, let destination, let rest)? = resolve(path, entity, alias),
                rest.count == 1, let member = layout.entity(destination.entityNumber),
                let index = destination.index(ofProperty: rest[0]),
                case .attribute(let column, _, .string) = member.slots[index]
            else { return nil }
            let memberAlias = nextAlias("p")
            guard let (from, link) = memberSource(slot, owner: owner, memberAlias: memberAlias),
                let condition = asciiCondition("\(memberAlias).\(column.sqlName)", c.op, c.rhs, c.options)
            else { return nil }
            return "EXISTS (SELECT 1 FROM \(from) WHERE \(link) AND (\(condition)))"
        }
        guard case .value(let column)? = resolve(path, entity, alias), column.kind == .string else { return nil }
        return asciiCondition(column.raw, c.op, c.rhs, c.options)
    }

    /// The members of a to-many slot, for prefilters (``QueryTranslator`` keeps the exact form).
    private func memberSource(_ slot: SlotLayout, owner: String, memberAlias m: String) -> (String, String)? {
        switch slot {
        case .toManyForeignKey(let fk):
            var link = "\(m).\(fk.column.sqlName) = \(owner).\("Z_PK".sqlName)"
            if !fk.destinationNumbers.isEmpty {
                link +=
                    " AND \(m).\("Z_ENT".sqlName) IN (\(fk.destinationNumbers.map(String.init).joined(separator: ", ")))"
            }
            return ("\(layout.qualified(fk.table)) \(m)", link)
        case .toManyJoin(let join):
            let j = "\(m)j"
            return (
                "\(layout.qualified(join.table)) \(j) JOIN \(layout.qualified(join.destinationTable)) \(m) ON \(m).\("Z_PK".sqlName) = \(j).\(join.memberColumn.sqlName)",
                "\(j).\(join.sourceColumn.sqlName) = \(owner).\("Z_PK".sqlName)"
            )
        default: return nil
        }
    }

    /// `CASE WHEN <plain ASCII> THEN <exact test> ELSE TRUE END` for a string column, or `nil`.
    private mutating func asciiCondition(
        _ column: String, _ op: ComparisonOperator, _ rhs: FetchExpression, _ options: ComparisonOptions
    ) -> String? {
        let folding = options.subtracting(.normalized)
        let text = folding.contains(.caseInsensitive) ? "lower(\(column) COLLATE \"C\")" : "(\(column) COLLATE \"C\")"
        /// The pattern as the evaluator compares it: folded, then NFC (an ASCII row's text is NFC).
        /// Patterns holding U+0000 (which text parameters cannot carry) are left to the evaluator.
        var unusable = false
        func folded(_ pattern: String) -> String {
            let result = folding.fold(pattern).precomposedStringWithCanonicalMapping
            if result.unicodeScalars.contains("\u{0}") { unusable = true }
            return result
        }
        let test: String
        switch (op, rhs) {
        case (.equal, .constant(.string(let p))), (.notEqual, .constant(.string(let p))),
            (.lessThan, .constant(.string(let p))),
            (.lessThanOrEqual, .constant(.string(let p))), (.greaterThan, .constant(.string(let p))),
            (.greaterThanOrEqual, .constant(.string(let p))):
            let value = bind { $0.append(rawText: folded(p)) }
            let sqlOperator = op == .notEqual ? "<>" : Self.sqlOperator(op) ?? "="
            test = "\(text) \(sqlOperator) \(value) COLLATE \"C\""
        case (.in, .aggregate(let items)):
            var values: [String] = []
            for item in items {
                guard case .constant(let member) = item else { return nil }
                switch member {
                case .string(let p): values.append(folded(p))
                case .null: continue  // a nil member matches no text; the evaluator decides nil rows
                default: return nil
                }
            }
            guard !values.isEmpty else { return nil }
            let placeholder = bind { parameters in
                parameters.appendArray(PGType.textArray, elementType: PGType.text, count: values.count) {
                    index, bytes in
                    bytes.append(contentsOf: values[index].utf8)
                    return true
                }
            }
            test = "\(text) = ANY(\(placeholder)::text[])"
        case (.beginsWith, .constant(.string(let p))) where !p.isEmpty:
            test = "starts_with(\(text), \(bind { $0.append(rawText: folded(p)) }))"
        case (.endsWith, .constant(.string(let p))) where !p.isEmpty:
            let suffix = folded(p)
            test =
                "right(\(text), \(bind { $0.append(int32: Int32(clamping: suffix.unicodeScalars.count)) })) = \(bind { $0.append(rawText: suffix) })"
        case (.contains, .constant(.string(let p))) where !p.isEmpty:
            test = "strpos(\(text), \(bind { $0.append(rawText: folded(p)) })) > 0"
        case (.like, .constant(.string(let p))):
            let pattern = Self.likePattern(p, folding: folding)
            if pattern.unicodeScalars.contains("\u{0}") { unusable = true }
            test = "\(text) LIKE \(bind { $0.append(rawText: pattern) })"
        default:
            return nil
        }
        if unusable { return nil }
        let ascii = bind { $0.append(rawText: Self.plainASCII) }
        return "CASE WHEN \(column) ~ \(ascii) THEN \(test) ELSE TRUE END"
    }

    /// A `LIKE` pattern (`*` any run, `?` one character, `\` escaping the next) as PostgreSQL's
    /// `LIKE` reads it (`%`, `_`, `\`), each literal folded on its own as the evaluator folds it.
    static func likePattern(_ pattern: String, folding: ComparisonOptions) -> String {
        var result = ""
        var escaping = false
        func literal(_ character: Character) {
            let text = folding.isEmpty ? String(character) : folding.fold(String(character))
            for scalar in text.precomposedStringWithCanonicalMapping.unicodeScalars {
                if scalar == "%" || scalar == "_" || scalar == "\\" { result.append("\\") }
                result.unicodeScalars.append(scalar)
            }
        }
        for character in pattern {
            if escaping {
                literal(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "*" {
                result.append("%")
            } else if character == "?" {
                result.append("_")
            } else {
                literal(character)
            }
        }
        if escaping { literal("\\") }
        return result
    }
}
