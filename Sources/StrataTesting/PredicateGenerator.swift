import Foundation
import Strata

/// Random predicate format strings over one entity's attributes and relationships, for
/// differential tests: a driver that translates predicates (to SQL, to an index scan) must answer
/// each exactly as the in-memory evaluator does (``StoreDriver`` rule 5).
///
/// The predicates mix comparisons of every operator and option (`[c]`, `[d]`, `[cd]`), `IN`,
/// `BETWEEN`, `nil`, arithmetic, key paths through to-one relationships, `@count` and `ANY`/`ALL`
/// over to-many ones, comparisons between two attributes and between two constants, constants of
/// the wrong type and extreme numbers, under `AND`, `OR` and `NOT`. Some are errors (a string
/// compared with `<` to a number): the evaluator's answer, an error included, is the reference.
///
/// ```swift
/// var random = SeededGenerator(seed: 7)
/// let entity = ConformanceModel.model.entity(named: "Employee")!
/// let format = PredicateGenerator.format(for: entity, in: ConformanceModel.model, using: &random)
/// ```
public enum PredicateGenerator {
    /// One predicate format string for rows of `entity`, nested at most `depth` levels.
    public static func format(
        for entity: EntityDescription, in model: ManagedObjectModel, depth: Int = 3, using random: inout SeededGenerator
    ) -> String {
        if depth > 0, Int.random(in: 0..<3, using: &random) == 0 {
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                return "(\(format(for: entity, in: model, depth: depth - 1, using: &random)) AND "
                    + "\(format(for: entity, in: model, depth: depth - 1, using: &random)))"
            case 1:
                return "(\(format(for: entity, in: model, depth: depth - 1, using: &random)) OR "
                    + "\(format(for: entity, in: model, depth: depth - 1, using: &random)))"
            default:
                return "NOT (\(format(for: entity, in: model, depth: depth - 1, using: &random)))"
            }
        }
        return comparison(entity, model, &random)
    }

    /// Scalar attribute types a format string can compare with a literal.
    private static let comparable: Set<AttributeType> = [
        .integer16, .integer32, .integer64, .decimal, .double, .float, .string, .boolean, .date,
    ]

    private static func comparison(
        _ entity: EntityDescription, _ model: ManagedObjectModel, _ random: inout SeededGenerator
    ) -> String {
        let attributes = entity.attributes.filter { !$0.isTransient && comparable.contains($0.type) }
        let toOne = entity.relationships.filter { !$0.isToMany }
        let toMany = entity.relationships.filter(\.isToMany)
        switch Int.random(in: 0..<20, using: &random) {
        case 0:
            return [
                "TRUEPREDICATE", "FALSEPREDICATE", "1 == 1", "1 < 0", "nil == nil", "'a' < 'b'", "2 + 2 == 4",
                "'abc' BEGINSWITH[c] 'A'", "1 IN {1, 2}", "-1 BETWEEN {-2, 0}",
            ].randomElement(using: &random)!  // non-empty literal
        case 1 where !toOne.isEmpty:
            let relationship = toOne[Int.random(in: 0..<toOne.count, using: &random)]
            if Bool.random(using: &random) {
                return "\(relationship.name) \(Bool.random(using: &random) ? "==" : "!=") nil"
            }
            guard let destination = model.entity(named: relationship.destinationEntityName) else { break }
            let inner = destination.attributes.filter { !$0.isTransient && comparable.contains($0.type) }
            guard !inner.isEmpty else { break }
            return attributeComparison(
                inner[Int.random(in: 0..<inner.count, using: &random)], prefix: relationship.name + ".", &random)
        case 2 where !toMany.isEmpty:
            let relationship = toMany[Int.random(in: 0..<toMany.count, using: &random)]
            let count = [-1, 0, 1, 2, 3, Int(Int32.max)][Int.random(in: 0..<6, using: &random)]
            return
                // non-empty literal
                "\(relationship.name).@count \(["==", "!=", ">", "<", ">=", "<="].randomElement(using: &random)!) \(count)"
        case 3 where !toMany.isEmpty:
            let relationship = toMany[Int.random(in: 0..<toMany.count, using: &random)]
            guard let destination = model.entity(named: relationship.destinationEntityName) else { break }
            let inner = destination.attributes.filter { !$0.isTransient && comparable.contains($0.type) }
            guard !inner.isEmpty else { break }
            let quantifier = ["ANY", "ALL", "NONE", "SOME"].randomElement(using: &random)!  // non-empty literal
            return "\(quantifier) "
                + attributeComparison(
                    inner[Int.random(in: 0..<inner.count, using: &random)], prefix: relationship.name + ".", &random)
        case 4 where attributes.count >= 2:
            let a = attributes[Int.random(in: 0..<attributes.count, using: &random)]
            let b = attributes[Int.random(in: 0..<attributes.count, using: &random)]
            // non-empty literal
            return "\(a.name) \(["==", "!=", "<", ">", "<=", ">="].randomElement(using: &random)!) \(b.name)"
        case 5 where !attributes.isEmpty:
            let a = attributes[Int.random(in: 0..<attributes.count, using: &random)]
            return
                // non-empty literal
                "\(a.name) \(["+", "-", "*", "/"].randomElement(using: &random)!) \(Int.random(in: -3...3, using: &random)) "
                // non-empty literal
                + "\(["==", ">", "<"].randomElement(using: &random)!) \(Int.random(in: -100...100, using: &random))"
        default:
            break
        }
        guard !attributes.isEmpty else { return "TRUEPREDICATE" }
        return attributeComparison(
            attributes[Int.random(in: 0..<attributes.count, using: &random)], prefix: "", &random)
    }

    private static func attributeComparison(
        _ attribute: AttributeDescription, prefix: String, _ random: inout SeededGenerator
    ) -> String {
        let key = prefix + attribute.name
        let value = literal(for: attribute.type, &random)
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return "\(key) \(Bool.random(using: &random) ? "==" : "!=") nil"
        case 1:
            return
                "\(key) IN {\(value), \(literal(for: attribute.type, &random)), \(literal(for: attribute.type, &random))}"
        case 2: return "\(key) BETWEEN {\(value), \(literal(for: attribute.type, &random))}"
        case 3 where attribute.type == .string:
            // non-empty literal
            let op = ["BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "==", "<"].randomElement(using: &random)!
            let options = ["", "[c]", "[d]", "[cd]"].randomElement(using: &random)!  // non-empty literal
            let pattern =
                op == "MATCHES"
                // non-empty literal
                ? ["'.*'", "'[a-z]+[0-9]'", "'A.*'", "'(unclosed'", "''"].randomElement(using: &random)!
                : literal(for: .string, &random)
            return "\(key) \(op)\(options) \(pattern)"
        case 4:
            // A constant of another type: the evaluator's error (or answer) is the reference.
            // non-empty literal
            let other = [AttributeType.string, .integer64, .double, .boolean, .date].randomElement(using: &random)!
            // non-empty literal
            return "\(key) \(["==", "<", ">", "!="].randomElement(using: &random)!) \(literal(for: other, &random))"
        default:
            let op = ["==", "!=", "<", "<=", ">", ">=", "=", "<>"].randomElement(using: &random)!  // non-empty literal
            return Int.random(in: 0..<6, using: &random) == 0 ? "\(value) \(op) \(key)" : "\(key) \(op) \(value)"
        }
    }

    /// A literal of `type` in format syntax, extreme values included.
    private static func literal(for type: AttributeType, _ random: inout SeededGenerator) -> String {
        switch type {
        case .integer16, .integer32, .integer64:
            if Int.random(in: 0..<3, using: &random) == 0 { return "\(ByteDamage.interestingInteger(using: &random))" }
            return "\(Int.random(in: -20...60, using: &random))"
        case .decimal, .double, .float:
            return ["0", "0.5", "-1.25", "1e300", "-1e300", "3.333333333333333", "20", "1000000000000000000000"]
                .randomElement(using: &random)!  // non-empty literal
        // non-empty literal
        case .boolean: return ["YES", "NO", "TRUE", "FALSE", "1", "0"].randomElement(using: &random)!
        case .date:
            // non-empty literal
            let seconds = [0, 700_000_000, 700_500_000, -1e10, 1e10, 9e15].randomElement(using: &random)!
            return "CAST(\(seconds), 'NSDate')"
        default:
            return [
                "'Ann'", "'ann'", "'a'", "''", "'É'", "'e'", "'alpha1'", "'%'", "'_'", "'*'", "'?'", "'x\\'y'",
                "'\\\\'",
                "'ü'", "'Research'", "'Zoë'",
            ].randomElement(using: &random)!  // non-empty literal
        }
    }
}
