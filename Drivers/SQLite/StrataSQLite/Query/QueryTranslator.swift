import Foundation
import Strata

/// Translates predicates and sort keys into SQL over a ``StoreLayout``, only where the SQL answers
/// exactly as the core's evaluator (``FetchPredicate/evaluate(with:substitutionVariables:)``).
///
/// What translates: comparisons of attributes and to-one key paths (joined with `LEFT JOIN`) with
/// constants, `IN`, `BETWEEN`, string operators with `[c]`/`[d]` (through the `STRATA` collation
/// and the `strata_fold`/`strata_match` functions, which call the core's own folding and matching),
/// object and `nil` comparisons of to-one relationships and `SELF`, `ANY`/`ALL`/`NONE` over one
/// to-many step as `EXISTS`, `@count` as a subquery, `AND`/`OR`/`NOT`. Every translated condition
/// is 0, 1 or NULL, and `NOT p` is `(p) IS NOT 1`, so `nil` behaves as the evaluator's `false`. Anything
/// else (arithmetic, subqueries, other aggregates, Decimal attributes, transformable values)
/// returns `nil`; a top-level `AND` keeps the parts that translate and reports itself inexact.
///
/// Bounded: a comparison of two constants is answered here by the evaluator (`1` or `0`), never
/// rewritten into another comparison; `AND`/`OR` lists and `IN` lists become balanced trees, so
/// their SQL nests with the logarithm of their length; a predicate whose SQL would nest deeper
/// than ``maximumNesting`` or bind more values than the engine takes is left to the core, which
/// answers it the same way.
struct QueryTranslator {
    let layout: StoreLayout
    /// The most `?` parameters one statement may have (the engine's `SQLITE_LIMIT_VARIABLE_NUMBER`).
    let maximumBindings: Int
    /// The most nesting the translation's SQL may have, in an upper estimate of the entries it
    /// takes on SQLite's parser stack. That stack holds 100 entries (`YYSTACKDEPTH`; more gives
    /// "parser stack overflow") and the statement around the `WHERE` clause takes some; SQLite's
    /// expression-depth limit (1000, `SQLITE_MAX_EXPR_DEPTH`) is never reached first.
    ///
    /// The estimates are about twice what SQLite 3.40 takes (measured by the nesting sweep in
    /// SQLiteDamagedDataTests); what does not fit is answered by the core, never refused.
    static let maximumNesting = 64
    /// Nesting estimates: each `NOT`, each level of a balanced list, each comparison (the
    /// deepest, an `EXISTS` subquery around a double column's `CASE`, stays below this).
    static let notNesting = 1, listLevelNesting = 2, comparisonNesting = 16
    /// `LEFT JOIN` clauses for to-one key paths, in order.
    private(set) var joins: [String] = []
    /// Values for the `?` placeholders of the `WHERE` clause, in order.
    private(set) var bindings: [SQLiteValue] = []
    private var joinAliases: [String: String] = [:]
    private var counter = 0
    /// The nesting of the SQL being built around the current translation step (``maximumNesting``).
    private(set) var nesting = 0

    init(layout: StoreLayout, maximumBindings: Int = 999) {
        self.layout = layout
        self.maximumBindings = maximumBindings
    }

    /// What a value compares as.
    enum Kind: Equatable {
        case number, double, string, date, uuid, binary, uri
    }

    /// A key path resolved against the layout.
    enum Resolved {
        case value(sql: String, kind: Kind)
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
        // The fetch joins this clause to its `Z_ENT` test with one more AND.
        let base = Self.listLevelNesting * (1 + Self.levels(parts.count))
        nesting += base
        for part in parts {
            let saved = self
            if let sql = translate(part, entity, alias), bindings.count <= maximumBindings {
                clauses.append(sql)
            } else {
                self = saved
                exact = false
            }
        }
        nesting -= base
        return (clauses.isEmpty ? nil : Self.balanced(clauses, "AND"), exact)
    }

    mutating func translate(_ predicate: FetchPredicate, _ entity: EntityDescription, _ alias: String) -> String? {
        let cost: Int
        switch predicate {
        case .constant: cost = 0
        case .not: cost = Self.notNesting
        case .and(let parts), .or(let parts): cost = Self.listLevelNesting * Self.levels(parts.count)
        case .comparison: cost = Self.comparisonNesting
        }
        guard nesting + cost <= Self.maximumNesting else { return nil }
        nesting += cost
        defer { nesting -= cost }
        switch predicate {
        case .constant(let value): return value ? "1" : "0"
        case .not(let inner): return translate(inner, entity, alias).map { Self.negated($0) }
        case .and(let parts):
            if parts.isEmpty { return "1" }
            var sql: [String] = []
            for part in parts {
                guard let clause = translate(part, entity, alias) else { return nil }
                sql.append(clause)
            }
            return Self.balanced(sql, "AND")
        case .or(let parts):
            if parts.isEmpty { return "0" }
            var sql: [String] = []
            for part in parts {
                guard let clause = translate(part, entity, alias) else { return nil }
                sql.append(clause)
            }
            return Self.balanced(sql, "OR")
        case .comparison(let comparison): return translate(comparison, entity, alias)
        }
    }

    /// `parts` joined with `op` as a balanced tree of parenthesized pairs (`((a) OR (b)) OR (c)`):
    /// SQLite nests a chain `a OR b OR c …` one level per term, a balanced tree log2 of them.
    static func balanced(_ parts: [String], _ op: String) -> String {
        func join(_ slice: ArraySlice<String>) -> String {
            if slice.count <= 1 { return "(\(slice.first ?? ""))" }
            let middle = slice.startIndex + slice.count / 2
            return "(\(join(slice[..<middle])) \(op) \(join(slice[middle...])))"
        }
        return join(parts[...])
    }

    /// `NOT sql` for a condition that is 0, 1 or NULL, with NULL read as false: `(sql) IS NOT 1`
    /// (one level of nesting, where `NOT IFNULL((sql), 0)` takes several).
    static func negated(_ sql: String) -> String { "(\(sql)) IS NOT 1" }

    /// The levels of a balanced tree of `count` leaves: ⌈log2(count)⌉.
    static func levels(_ count: Int) -> Int {
        count <= 1 ? 0 : Int.bitWidth - (count - 1).leadingZeroBitCount
    }

    private mutating func translate(_ c: ComparisonPredicate, _ entity: EntityDescription, _ alias: String) -> String? {
        if Self.isConstant(c.lhs), Self.isConstant(c.rhs) {
            // Two constants: the evaluator answers once, for every row. When it throws (a type
            // mismatch), nothing is translated and the core's evaluation throws the same error to
            // the caller, so the `try?` loses nothing.
            guard let answer = try? FetchPredicate.comparison(c).evaluate(with: [String: StoreValue]()) else {
                return nil
            }
            return answer ? "1" : "0"
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
        case (.value(let sql, let kind), .constant(let constant)):
            return compare(sql, kind, c.op, constant, c.options)
        case (.value(let sql, let kind), .aggregate(let items)):
            let constants = items.compactMap { item -> StoreValue? in
                if case .constant(let value) = item { return value }
                return nil
            }
            guard constants.count == items.count else { return nil }
            return compare(sql, kind, c.op, list: constants, c.options)
        case (.value(let a, let kind), .keyPath):
            // Numbers compare with numbers and dates with dates; anything else the evaluator refuses
            // (a type mismatch) where SQLite would answer, so it is left to the evaluator.
            let numeric: [Kind] = [.number, .double]
            guard kind == .number || kind == .double || kind == .date, c.options.isEmpty,
                case .value(let b, let other)? = operand(c.rhs, entity, alias),
                other == kind || (numeric.contains(kind) && numeric.contains(other))
            else { return nil }
            // nil == nil, nil <= nil and nil >= nil hold in the evaluator. A double column reads NaN
            // as NULL too (columnSQL), so those forms are left to the evaluator for doubles.
            switch c.op {
            case .lessThan, .greaterThan: return "\(a) \(Self.sqlOperator(c.op)) \(b)"
            case _ where kind == .double || other == .double: return nil
            case .equal: return "\(a) IS \(b)"
            case .notEqual: return "\(a) IS NOT \(b)"
            case .lessThanOrEqual, .greaterThanOrEqual:
                return "(\(a) \(Self.sqlOperator(c.op)) \(b)) OR (\(a) IS NULL AND \(b) IS NULL)"
            default: return nil
            }
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
            let member = layout.entity(destination.entityNumber),
            let (index, used) = destination.slot(forComponents: rest, from: 0), used == rest.count,
            case .attribute(let column, _, let type) = member.slots[index]
        else { return nil }
        let memberAlias = nextAlias("m")
        guard let (from, link) = toManySource(slot, owner: owner, memberAlias: memberAlias),
            let kind = Self.kind(of: type)
        else { return nil }
        guard
            let condition = compare(
                columnSQL("\(memberAlias).\(column.sqlName)", kind), kind, c.op, constant, c.options)
        else { return nil }
        if c.modifier == .any { return "EXISTS (SELECT 1 FROM \(from) WHERE \(link) AND (\(condition)))" }
        return "NOT EXISTS (SELECT 1 FROM \(from) WHERE \(link) AND \(Self.negated(condition)))"
    }

    /// The `FROM` and link condition that list the members of a to-many slot of row `owner`.
    private mutating func toManySource(_ slot: SlotLayout, owner: String, memberAlias m: String) -> (String, String)? {
        switch slot {
        case .toManyForeignKey(let fk):
            var link = "\(m).\(fk.column.sqlName) = \(owner).Z_PK"
            if !fk.destinationNumbers.isEmpty {
                link += " AND \(m).Z_ENT IN (\(fk.destinationNumbers.map(String.init).joined(separator: ", ")))"
            }
            return ("\(fk.table.sqlName) \(m)", link)
        case .toManyJoin(let join):
            let j = nextAlias("j")
            return (
                "\(join.table.sqlName) \(j) JOIN \(join.destinationTable.sqlName) \(m) ON \(m).Z_PK = \(j).\(join.memberColumn.sqlName)",
                "\(j).\(join.sourceColumn.sqlName) = \(owner).Z_PK"
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
            return .toOne(sql: "\(alias).Z_PK", entitySQL: "\(alias).Z_ENT", destination: entity)
        case .collection(.count, of: .keyPath(let path), keyPath: nil):
            guard case .toMany(let owner, let slot, _, let rest)? = resolve(path, entity, alias), rest.isEmpty else {
                return nil
            }
            let m = nextAlias("m")
            guard let (from, link) = toManySource(slot, owner: owner, memberAlias: m) else { return nil }
            return .value(sql: "(SELECT COUNT(*) FROM \(from) WHERE \(link))", kind: .number)
        default:
            return nil
        }
    }

    /// Resolves a key path: attributes and to-one relationships (joining each intermediate to-one
    /// step), or the first to-many step with the components after it.
    mutating func resolve(_ path: String, _ entity: EntityDescription, _ alias: String) -> Resolved? {
        let components = path.split(separator: ".").map(String.init)
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
                guard isLast, let kind = Self.kind(of: type) else { return nil }
                return .value(sql: columnSQL("\(currentAlias).\(column.sqlName)", kind), kind: kind)
            case .toOne(let column, _, let entityColumn, _, let destinationNumber):
                guard let destination = layout.model.entity(number: destinationNumber) else { return nil }
                if isLast {
                    return .toOne(
                        sql: "\(currentAlias).\(column.sqlName)",
                        entitySQL: entityColumn.map { "\(currentAlias).\($0.sqlName)" },
                        destination: destination)
                }
                guard let table = layout.entity(destination.entityNumber)?.table else { return nil }
                let key = "\(currentAlias).\(column.sqlName)"
                if let existing = joinAliases[key] {
                    currentAlias = existing
                } else {
                    let joined = nextAlias("r")
                    joins.append(
                        "LEFT JOIN \(table.sqlName) \(joined) ON \(joined).Z_PK = \(currentAlias).\(column.sqlName)")
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
            case .none, .missing:
                return nil
            }
        }
        return nil
    }

    /// Whether an expression is a constant or an array of constants (reads nothing of the row).
    static func isConstant(_ expression: FetchExpression) -> Bool {
        switch expression {
        case .constant: true
        case .aggregate(let items): items.allSatisfy { if case .constant = $0 { true } else { false } }
        default: false
        }
    }

    private mutating func nextAlias(_ prefix: String) -> String {
        counter += 1
        return "\(prefix)\(counter)"
    }

    /// A column as it compares: double columns map the blobs that hold `-0.0` (to 0) and NaN (to NULL).
    func columnSQL(_ column: String, _ kind: Kind) -> String {
        guard kind == .double else { return column }
        return
            "(CASE WHEN typeof(\(column)) = 'blob' THEN (CASE WHEN \(column) = x'8000000000000000' THEN 0.0 END) ELSE \(column) END)"
    }

    static func kind(of type: AttributeType) -> Kind? {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: .number
        case .double, .float: .double
        case .string: .string
        case .date: .date
        case .uuid: .uuid
        case .binaryData: .binary
        case .uri: .uri
        default: nil
        }
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

    static func sqlOperator(_ op: ComparisonOperator) -> String {
        switch op {
        case .lessThan: "<"
        case .lessThanOrEqual: "<="
        case .greaterThan: ">"
        case .greaterThanOrEqual: ">="
        case .equal: "="
        default: "<>"
        }
    }

    mutating func bind(_ value: SQLiteValue) -> String {
        bindings.append(value)
        return "?"
    }
}
