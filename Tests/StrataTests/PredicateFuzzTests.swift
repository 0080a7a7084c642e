import Foundation
import Strata
import StrataTesting
import Testing

@Suite("Predicate parser fuzzing")
struct PredicateFuzzTests {
    static let seeds: [String] = [
        "name BEGINSWITH[cd] 'a' AND age > 30", "ANY friends.age BETWEEN {40, 50}", "NOT (a == 1 OR b != 2)",
        "SUBQUERY(friends, $f, $f.age > age).@count == 2", "items.@sum.price < 10.5 AND tags CONTAINS 'x'",
        "lowercase(name) LIKE[c] '*x?' || TRUEPREDICATE", "CAST(0, 'NSDate') < birthday && -age == -3",
        "TERNARY(a > 1, 'x', 'y') == $V", "modulus:by:(a, 2) == 0 AND name MATCHES '[a-z]+'", "#IN == nil",
    ]
    static let fragments: [String] = [
        "(", ")", "{", "}", "[", "]", ",", ".", "'", "\"", "\\", "$", "@", "#", "%", "%@", "%K", "==", "!=", "<", ">",
        "<=", ">=", "=<", "=>", "<>", "&&", "||", "!", "+", "-", "*", "/", "**", ":", " AND ", " OR ", " NOT ", "ANY ",
        "ALL ", "NONE ", " IN ", " LIKE ", " MATCHES ", "[cd]", " BETWEEN ", "SUBQUERY(", "CAST(", "TERNARY(",
        "FUNCTION(", "@count", "@sum", "nil", "YES", "SELF", "0x", "1e", "3.5", "42", "a", "b.c", "now()", "é", "🎉",
        "\n",
        "\u{0}", "TRUEPREDICATE", "FALSEPREDICATE",
    ]

    /// Parses `format`; anything but success or a `FetchPredicateError` fails the test. When it parses,
    /// printing and parsing again must give the same tree, and evaluating must not crash.
    static func check(_ format: String) {
        let predicate: FetchPredicate
        do {
            predicate = try FetchPredicate(format: format)
        } catch is FetchPredicateError {
            return
        } catch {
            Issue.record("unexpected error \(error) for \(format.debugDescription)")
            return
        }
        do {
            let reparsed = try FetchPredicate(format: predicate.predicateFormat)
            #expect(reparsed == predicate, "\(format.debugDescription) → \(predicate.predicateFormat.debugDescription)")
        } catch {
            Issue.record(
                "printed form does not parse: \(format.debugDescription) → \(predicate.predicateFormat.debugDescription): \(error)"
            )
        }
        let row: [String: StoreValue] = ["a": .integer(1), "name": .string("x"), "age": .integer(3)]
        do {
            _ = try predicate.evaluate(with: row)
        } catch is FetchPredicateError {
        } catch {
            Issue.record("evaluation threw \(error) for \(format.debugDescription)")
        }
        _ = predicate.keyPaths
    }

    @Test("random token soup never crashes the parser", arguments: [1, 2, 3, 4] as [UInt64])
    func tokenSoup(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        for _ in 0..<4_000 {
            let length = Int.random(in: 1...24, using: &random)
            let format = (0..<length).map { _ in Self.fragments.randomElement(using: &random)! }.joined()
            Self.check(format)
        }
    }

    @Test("mutated valid predicates never crash the parser", arguments: [11, 12, 13] as [UInt64])
    func mutations(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        for _ in 0..<4_000 {
            var scalars = Array(Self.seeds.randomElement(using: &random)!.unicodeScalars)
            for _ in 0..<Int.random(in: 1...4, using: &random) where !scalars.isEmpty {
                let position = Int.random(in: 0..<scalars.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: scalars.remove(at: position)
                case 1:
                    scalars.insert(
                        contentsOf: Self.fragments.randomElement(using: &random)!.unicodeScalars, at: position)
                case 2: scalars[position] = Unicode.Scalar(UInt8.random(in: 32...126, using: &random))
                default: scalars.swapAt(position, Int.random(in: 0..<scalars.count, using: &random))
                }
            }
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars)
            Self.check(String(view))
        }
    }

    @Test("random bytes never crash the parser")
    func randomBytes() {
        var random = SeededGenerator(seed: 99)
        for _ in 0..<3_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            Self.check(String(decoding: bytes, as: UTF8.self))
        }
    }

    @Test("every prefix of valid predicates either parses or throws a syntax error")
    func prefixes() {
        for seed in Self.seeds {
            let scalars = Array(seed.unicodeScalars)
            for end in 0...scalars.count {
                var view = String.UnicodeScalarView()
                view.append(contentsOf: scalars[0..<end])
                Self.check(String(view))
            }
        }
    }

    @Test(
        "compiled row predicates answer exactly as the evaluator on random predicates",
        arguments: [21, 22, 23] as [UInt64])
    func compiledAgreesWithEvaluator(seed: UInt64) throws {
        let stack = try TestStack(seeded: true)
        let model = ConformanceModel.model
        var random = SeededGenerator(seed: seed)
        var rowsByEntity: [String: [RowSnapshot]] = [:]
        var byID: [RowID: RowSnapshot] = [:]
        for entity in model.entities {
            let rows = try stack.store.driver.fetch(StoreFetch(entity: entity)).rows
            rowsByEntity[entity.name] = rows
            for row in rows { byID[row.id] = row }
        }
        var compiledCount = 0
        for _ in 0..<1_500 {
            let entity = model.entities[Int.random(in: 0..<model.entities.count, using: &random)]
            let format = PredicateGenerator.format(for: entity, in: model, using: &random)
            // generated text that does not parse is the parser fuzz's concern
            guard let predicate = try? FetchPredicate(format: format) else { continue }
            guard let compiled = CompiledRowPredicate(predicate, entity: entity) else { continue }
            compiledCount += 1
            for row in rowsByEntity[entity.name] ?? [] {
                let view = RowView(row, model: model, lookup: { byID[$0] })
                let expected = Result { try predicate.evaluate(with: view) }
                let answered = Result { try compiled.matches(row.values) }
                switch (expected, answered) {
                case (.success(let a), .success(let b)):
                    #expect(
                        a == b, "seed \(seed): \(entity.name) [\(format)] row \(row.id): evaluator \(a), compiled \(b)")
                case (.failure, .failure): break
                default:
                    Issue.record(
                        "seed \(seed): \(entity.name) [\(format)] row \(row.id): evaluator \(expected), compiled \(answered)"
                    )
                }
            }
        }
        #expect(compiledCount > 300, "seed \(seed): \(compiledCount) predicates compiled")
    }
}
