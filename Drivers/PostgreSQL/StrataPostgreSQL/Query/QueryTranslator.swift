import Foundation
import Strata

/// Translates predicates and sort keys into PostgreSQL over a ``StoreLayout``, only where the SQL
/// answers exactly as the core's evaluator (``FetchPredicate/evaluate(with:substitutionVariables:)``).
///
/// What translates: comparisons of attributes and to-one key paths (joined with `LEFT JOIN`) with
/// constants, `IN`, `BETWEEN`, numeric comparisons of two key paths, string comparisons without
/// `[c]`/`[d]` (as `normalize(…, NFC) COLLATE "C"`, the order and equality of Swift strings),
/// object and `nil` comparisons of to-one relationships and `SELF`, `ANY`/`ALL`/`NONE` over one
/// to-many step as `EXISTS`, `@count` as a subquery, `AND`/`OR`/`NOT`. Every translated condition
/// is TRUE, FALSE or NULL, and `NOT p` is `(p) IS NOT TRUE`, so NULL acts as the evaluator's false.
///
/// What does not: the string operators (`BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, `MATCHES`)
/// and `[c]`/`[d]` comparisons (the server cannot run the core's folding and matching; the driver
/// finishes them with the evaluator), arithmetic, `SUBQUERY`, other aggregates, transformable
/// values. A top-level `AND` keeps the parts that translate and reports itself inexact.
///
/// Bounded: a comparison of two constants is answered here by the evaluator; `AND`/`OR` lists
/// become balanced trees; a predicate that would nest deeper than ``maximumNesting`` or bind more
/// values than ``maximumBindings`` is left to the evaluator.
struct QueryTranslator {
    let layout: StoreLayout
    /// Whether string comparisons may be translated (a UTF-8 server with `normalize`).
    let strings: Bool
    /// The most parameters a translation binds (the protocol allows 65,535 per statement).
    static let maximumBindings = 30_000
    /// The most nesting the translation's SQL may have; deeper predicates are left to the evaluator
    /// (the server's parser and planner recurse on nesting, bounded by `max_stack_depth`).
    static let maximumNesting = 200
    /// `LEFT JOIN` clauses for to-one key paths, in order.
    private(set) var joins: [String] = []
    /// The parameters of the statement, in order.
    var parameters = PGParameters()
    private var joinAliases: [String: String] = [:]
    private var counter = 0
    private(set) var nesting = 0

    init(layout: StoreLayout, strings: Bool) {
        self.layout = layout
        self.strings = strings
    }

    /// What a value compares as.
    enum Kind: Equatable {
        /// Integers (any width) and Booleans (`::integer`).
        case integer
        case double
        case decimal
        case string
        case date
        case uuid
        case binary
        case uri
    }

    /// A column or expression of a row, with the SQL that compares as the evaluator does
    /// (`value`: NaN read as NULL) and the SQL of the stored value (`raw`, for `nil` tests).
    struct Column {
        var value: String
        var raw: String
        var kind: Kind
        /// Integers whose every value converts to a double exactly (not `Integer 64`).
        var isSmallInteger: Bool = false
    }

    /// A key path resolved against the layout.
    enum Resolved {
        case value(Column)
        case toOne(sql: String, entitySQL: String?, destination: EntityDescription)
        case toMany(owner: String, slot: SlotLayout, destination: EntityDescription, rest: [String])
    }

    // MARK: Predicates

    /// Translates the conjuncts of `predicate` that can be; `exact` is false when some could not.
    mutating func whereClause(_ predicate: FetchPredicate, _ entity: EntityDescription, _ alias: String)
        -> (sql: String?, exact: Bool)
    {
        let parts: [FetchPredicate]
        if case .and(let list) = predicate { parts = list } else { parts = [predicate] }
        var clauses: [String] = []
        var exact = true
        for part in parts {
            if let sql = attempt({ $0.translate(part, entity, alias) }) {
                clauses.append(sql)
            } else {
                exact = false
                // A wider condition the server can check: the driver finishes with the evaluator.
                if let sql = attempt({ $0.superset(part, entity, alias) }) { clauses.append(sql) }
            }
        }
        return (clauses.isEmpty ? nil : Self.balanced(clauses, "AND"), exact)
    }

    /// Runs one translation; when it gives nothing (or binds too much), the translator is as it was
    /// before, so no parameter or join of the failed attempt stays.
    mutating func attempt(_ body: (inout QueryTranslator) -> String?) -> String? {
        let saved = self
        if let sql = body(&self), parameters.count <= Self.maximumBindings { return sql }
        self = saved
        return nil
    }

    mutating func translate(_ predicate: FetchPredicate, _ entity: EntityDescription, _ alias: String) -> String? {
        guard nesting < Self.maximumNesting else { return nil }
        nesting += 1
        defer { nesting -= 1 }
        switch predicate {
        case .constant(let value): return value ? "TRUE" : "FALSE"
        case .not(let inner): return translate(inner, entity, alias).map(Self.negated)
        case .and(let parts), .or(let parts):
            let isAnd: Bool
            if case .and = predicate { isAnd = true } else { isAnd = false }
            if parts.isEmpty { return isAnd ? "TRUE" : "FALSE" }
            var sql: [String] = []
            for part in parts {
                guard let clause = translate(part, entity, alias) else { return nil }
                sql.append(clause)
            }
            return Self.balanced(sql, isAnd ? "AND" : "OR")
        case .comparison(let comparison): return translate(comparison, entity, alias)
        }
    }

    /// `parts` joined with `op` as a balanced tree of parenthesized pairs, so a list of n terms
    /// nests log2 n deep.
    static func balanced(_ parts: [String], _ op: String) -> String {
        func join(_ slice: ArraySlice<String>) -> String {
            if slice.count <= 1 { return "(\(slice.first ?? "TRUE"))" }
            let middle = slice.startIndex + slice.count / 2
            return "(\(join(slice[..<middle])) \(op) \(join(slice[middle...])))"
        }
        return join(parts[...])
    }

    /// `NOT sql` for a condition that is TRUE, FALSE or NULL, with NULL read as false.
    static func negated(_ sql: String) -> String { "((\(sql)) IS NOT TRUE)" }

    private mutating func translate(_ c: ComparisonPredicate, _ entity: EntityDescription, _ alias: String) -> String? {
        if Self.isConstant(c.lhs), Self.isConstant(c.rhs) {
            // Two constants: the evaluator answers once, for every row. When it throws (a type
            // mismatch), nothing is translated and the evaluation that follows throws the same
            // error to the caller, so the `try?` loses nothing.
            guard let answer = try? FetchPredicate.comparison(c).evaluate(with: [String: StoreValue]()) else {
                return nil
            }
            return answer ? "TRUE" : "FALSE"
        }
        if c.modifier != .direct {
            guard case .keyPath(let path) = c.lhs, case .constant(let constant) = c.rhs else { return nil }
            return quantified(c, path: path, constant: constant, entity, alias)
        }
        // Constant on the left: mirror the comparison where the operator allows it.
        if case .constant = c.lhs, c.rhs != .evaluatedObject {
            guard let mirrored = Self.mirror(c.op) else { return nil }
            return translate(ComparisonPredicate(c.rhs, mirrored, c.lhs, options: c.options), entity, alias)
        }
        guard let left = operand(c.lhs, entity, alias) else { return nil }
        switch (left, c.rhs) {
        case (.value(let column), .constant(let constant)):
            return compare(column, c.op, constant, c.options)
        case (.value(let column), .aggregate(let items)):
            var constants: [StoreValue] = []
            for item in items {
                guard case .constant(let value) = item else { return nil }
                constants.append(value)
            }
            return compare(column, c.op, list: constants, c.options)
        case (.value(let a), .keyPath):
            guard case .value(let b)? = operand(c.rhs, entity, alias) else { return nil }
            return compare(a, c.op, b, c.options)
        case (.toOne(let sql, let entitySQL, let destination), .constant(let constant)):
            return compareReference(sql, entitySQL, destination, c.op, constant)
        default:
            return nil
        }
    }

    /// `ANY`/`ALL` over a to-many key path, as `EXISTS`.
    private mutating func quantified(
        _ c: ComparisonPredicate, path: String, constant: StoreValue, _ entity: EntityDescription, _ alias: String
    ) -> String? {
        guard case .toMany(let owner, let slot, let destination, let rest)? = resolve(path, entity, alias),
            rest.count == 1, let member = layout.entity(destination.entityNumber),
            let index = destination.index(ofProperty: rest[0]),
            case .attribute(let column, _, let type) = member.slots[index]
        else { return nil }
        let memberAlias = nextAlias("m")
        guard let (from, link) = toManySource(slot, owner: owner, memberAlias: memberAlias),
            let memberColumn = Self.column("\(memberAlias).\(column.sqlName)", type)
        else { return nil }
        guard let condition = compare(memberColumn, c.op, constant, c.options) else { return nil }
        if c.modifier == .any { return "EXISTS (SELECT 1 FROM \(from) WHERE \(link) AND (\(condition)))" }
        return "NOT EXISTS (SELECT 1 FROM \(from) WHERE \(link) AND \(Self.negated(condition)))"
    }

    /// The `FROM` and link condition that list the members of a to-many slot of row `owner`.
    private mutating func toManySource(_ slot: SlotLayout, owner: String, memberAlias m: String) -> (String, String)? {
        switch slot {
        case .toManyForeignKey(let fk):
            var link = "\(m).\(fk.column.sqlName) = \(owner).\("Z_PK".sqlName)"
            if !fk.destinationNumbers.isEmpty {
                link +=
                    " AND \(m).\("Z_ENT".sqlName) IN (\(fk.destinationNumbers.map(String.init).joined(separator: ", ")))"
            }
            return ("\(layout.qualified(fk.table)) \(m)", link)
        case .toManyJoin(let join):
            let j = nextAlias("j")
            return (
                "\(layout.qualified(join.table)) \(j) JOIN \(layout.qualified(join.destinationTable)) \(m) ON \(m).\("Z_PK".sqlName) = \(j).\(join.memberColumn.sqlName)",
                "\(j).\(join.sourceColumn.sqlName) = \(owner).\("Z_PK".sqlName)"
            )
        default: return nil
        }
    }

    private mutating func operand(_ expression: FetchExpression, _ entity: EntityDescription, _ alias: String)
        -> Resolved?
    {
        switch expression {
        case .keyPath(let path):
            guard let resolved = resolve(path, entity, alias) else { return nil }
            if case .toMany = resolved { return nil }
            return resolved
        case .evaluatedObject:
            return .toOne(
                sql: "\(alias).\("Z_PK".sqlName)", entitySQL: "\(alias).\("Z_ENT".sqlName)", destination: entity)
        case .collection(.count, of: .keyPath(let path), keyPath: nil):
            guard case .toMany(let owner, let slot, _, let rest)? = resolve(path, entity, alias), rest.isEmpty else {
                return nil
            }
            let m = nextAlias("m")
            guard let (from, link) = toManySource(slot, owner: owner, memberAlias: m) else { return nil }
            let sql = "(SELECT count(*) FROM \(from) WHERE \(link))"
            return .value(Column(value: sql, raw: sql, kind: .integer, isSmallInteger: false))
        default:
            return nil
        }
    }

    /// Resolves a key path: attributes and to-one relationships (joining each intermediate to-one
    /// step), or the first to-many step with the components after it.
    mutating func resolve(_ path: String, _ entity: EntityDescription, _ alias: String) -> Resolved? {
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var current = entity
        var currentAlias = alias
        var position = 0
        while position < components.count {
            // A composite's element (`location.latitude`) is one slot spanning several components.
            guard let layoutEntity = layout.entity(current.entityNumber),
                let (slot, used) = current.slot(forComponents: components, from: position)
            else {
                return nil
            }
            position += used
            let isLast = position == components.count
            switch layoutEntity.slots[slot] {
            case .attribute(let column, _, let type):
                guard isLast, let resolved = Self.column("\(currentAlias).\(column.sqlName)", type) else { return nil }
                return .value(resolved)
            case .toOne(let column, _, let entityColumn, _, let destinationNumber):
                guard let destination = layout.model.entity(number: destinationNumber) else { return nil }
                if isLast {
                    return .toOne(
                        sql: "\(currentAlias).\(column.sqlName)",
                        entitySQL: entityColumn.map { "\(currentAlias).\($0.sqlName)" }, destination: destination)
                }
                guard let table = layout.entity(destination.entityNumber)?.table else { return nil }
                let key = "\(currentAlias).\(column.sqlName)"
                if let existing = joinAliases[key] {
                    currentAlias = existing
                } else {
                    let joined = nextAlias("r")
                    joins.append(
                        "LEFT JOIN \(layout.qualified(table)) \(joined) ON \(joined).\("Z_PK".sqlName) = \(currentAlias).\(column.sqlName)"
                    )
                    joinAliases[key] = joined
                    currentAlias = joined
                }
                current = destination
            case .toManyForeignKey, .toManyJoin:
                guard let relationship = current.properties[slot].relationship,
                    let destination = layout.model.entity(named: relationship.destinationEntityName)
                else { return nil }
                return .toMany(
                    owner: currentAlias, slot: layoutEntity.slots[slot], destination: destination,
                    rest: Array(components[position...]))
            case .none:
                return nil
            }
        }
        return nil
    }

    /// The comparable SQL of an attribute column, or `nil` for types that do not compare in SQL.
    static func column(_ sql: String, _ type: AttributeType) -> Column? {
        switch type {
        case .integer16, .integer32: Column(value: sql, raw: sql, kind: .integer, isSmallInteger: true)
        case .integer64: Column(value: sql, raw: sql, kind: .integer)
        case .boolean: Column(value: "\(sql)::integer", raw: sql, kind: .integer, isSmallInteger: true)
        case .double, .float: Column(value: "NULLIF(\(sql), 'NaN'::float8)", raw: sql, kind: .double)
        case .date: Column(value: "NULLIF(\(sql), 'NaN'::float8)", raw: sql, kind: .date)
        case .decimal: Column(value: "NULLIF(\(sql), 'NaN'::numeric)", raw: sql, kind: .decimal)
        case .string:
            // ASCII text is NFC already (a byte per character): normalize() only what is not, a
            // third of a sort of ASCII names on the server (22 against 15 ms for 11,000 rows).
            Column(
                value:
                    "(CASE WHEN octet_length(\(sql)) = char_length(\(sql)) THEN \(sql) ELSE normalize(\(sql), NFC) END) COLLATE \"C\"",
                raw: sql, kind: .string)
        case .uri: Column(value: "\(sql) COLLATE \"C\"", raw: sql, kind: .uri)
        case .uuid: Column(value: sql, raw: sql, kind: .uuid)
        case .binaryData: Column(value: sql, raw: sql, kind: .binary)
        default: nil
        }
    }

    /// Whether an expression is a constant or an array of constants (reads nothing of the row).
    static func isConstant(_ expression: FetchExpression) -> Bool {
        switch expression {
        case .constant: true
        case .aggregate(let items): items.allSatisfy { if case .constant = $0 { true } else { false } }
        default: false
        }
    }

    mutating func nextAlias(_ prefix: String) -> String {
        counter += 1
        return "\(prefix)\(counter)"
    }

    static func mirror(_ op: ComparisonOperator) -> ComparisonOperator? {
        switch op {
        case .equal, .notEqual: op
        case .lessThan: .greaterThan
        case .lessThanOrEqual: .greaterThanOrEqual
        case .greaterThan: .lessThan
        case .greaterThanOrEqual: .lessThanOrEqual
        default: nil
        }
    }

    static func sqlOperator(_ op: ComparisonOperator) -> String? {
        switch op {
        case .lessThan: "<"
        case .lessThanOrEqual: "<="
        case .greaterThan: ">"
        case .greaterThanOrEqual: ">="
        case .equal: "="
        default: nil
        }
    }

    /// The placeholder of the next parameter (`$n`).
    var nextPlaceholder: String { "$\(parameters.count + 1)" }
}
