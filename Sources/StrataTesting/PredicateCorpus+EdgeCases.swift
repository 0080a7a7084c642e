import Foundation
import Strata

extension PredicateCorpus {
    /// `Item` rows for the edge cases, each labelled by its `int16`: empty, composed, decomposed,
    /// full-width and multi-line strings, and `nil`s in `string`, `int32` and `int64`.
    public static let edgeRows: [(label: Int16, string: String?, int32: Int32?, int64: Int64?)] = [
        (1, "abc", 1, 1), (2, "", nil, nil), (3, nil, nil, 5), (4, "a\nb", 3, 3), (5, "e\u{301}", 5, 7),
        (6, "\u{e9}", 10, 10), (7, "t\u{fc}v", 20, nil), (8, "tu\u{308}v", 2, 11), (9, "a*b", nil, 12),
        (10, "\u{ff21}bc", 4, nil), (11, "a\\b", nil, nil), (12, "stra\u{df}e", 6, 6), (13, "\u{fb01}", nil, 2),
    ]

    /// Predicates over ``edgeRows`` with the labels of the rows Foundation's evaluation accepts,
    /// and where that answer comes from (docs/predicates.md, "Where the rules come from"). Every
    /// driver, and the in-memory evaluator, must give exactly these answers.
    public static let edgeCases: [(format: String, expected: Set<Int16>, source: String)] = {
        let strings: Set<Int16> = [1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
        return [
            ("string BEGINSWITH ''", [], "Realm #5200; Foundation NSSubstringPredicateOperator"),
            ("string ENDSWITH[c] ''", [], "Realm #5200"), ("string CONTAINS ''", [], "Realm #5200; radar 20626872"),
            ("string CONTAINS[cd] ''", [], "Realm QueryTests"),
            ("'' IN string", [], "Foundation NSInPredicateOperator"),
            ("string LIKE ''", [], "Foundation NSMatchingPredicateOperator"),
            ("string MATCHES ''", [], "Foundation NSMatchingPredicateOperator"),
            ("string LIKE '*'", strings, "Apple doc (LIKE wildcards)"),
            ("string BEGINSWITH nil", [], "Realm #3613"), ("string CONTAINS[c] nil", [], "Realm #3613"),
            ("string LIKE 'a*'", [1, 4, 9, 11], "GNUstep likeWildcards.m (* matches line breaks)"),
            ("string LIKE 'a?b'", [4, 9, 11], "GNUstep likeWildcards.m; Foundation UREGEX_DOTALL"),
            ("string LIKE 'a\\\\*b'", [9], "GNUstep likeWildcards.m (backslash escapes)"),
            ("string MATCHES 'a.b'", [4, 9, 11], "GNUstep matchesLineAnchors.m"),
            ("string MATCHES '.*^b$'", [4], "GNUstep matchesLineAnchors.m"),
            ("string MATCHES '^b$'", [], "GNUstep matchesLineAnchors.m; Apple doc (whole string)"),
            ("string == '\u{e9}'", [6], "Apple doc isEqualToString: (literal)"),
            ("string != '\u{e9}'", strings.union([3]).subtracting([6]), "Foundation NSEqualityPredicateOperator"),
            ("string ==[c] '\u{e9}'", [5, 6], "Foundation CFStringCompareWithOptions (non-literal)"),
            ("string ==[d] 'e'", [5, 6], "Apple doc ([d])"), ("string ==[d] 'tuv'", [7, 8], "Realm QueryTests"),
            ("string CONTAINS[d] 'u'", [7, 8], "Realm QueryTests"),
            ("string BEGINSWITH '\u{e9}'", [5, 6], "Foundation rangeOfString: (non-literal)"),
            ("string LIKE '\u{e9}'", [5, 6], "Foundation _NSPredicateOperatorUtilities (NFKC)"),
            ("string LIKE 'fi'", [13], "Foundation _NSPredicateOperatorUtilities (NFKC)"),
            ("string ==[c] 'abc'", [1, 10], "Foundation kCFCompareWidthInsensitive"),
            ("string ==[c] 'STRASSE'", [12], "Foundation CFStringFold (full case folding)"),
            ("string IN {'abc', '\u{e9}'}", [1, 6], "Foundation NSInPredicateOperator (containsObject:)"),
            ("string IN[c] {'ABC'}", [], "Foundation NSInPredicateOperator (options unused for collections)"),
            ("string IN {nil, 'abc'}", [1], "Foundation NSInPredicateOperator (nil matches nothing)"),
            ("string <= nil", [3], "Foundation NSComparisonPredicateOperator"),
            ("string >= nil", [3], "Foundation NSComparisonPredicateOperator"),
            ("string < nil", [], "Foundation NSComparisonPredicateOperator"),
            ("int32 == int64", [1, 2, 4, 6, 11, 12], "Foundation NSEqualityPredicateOperator (nil == nil)"),
            ("int32 != int64", [3, 5, 7, 8, 9, 10, 13], "Foundation NSEqualityPredicateOperator"),
            ("int32 <= int64", [1, 2, 4, 5, 6, 8, 11, 12], "Foundation NSComparisonPredicateOperator (nil <= nil)"),
            ("int32 >= int64", [1, 2, 4, 6, 11, 12], "Foundation NSComparisonPredicateOperator"),
            ("int32 < int64", [5, 8], "Foundation NSComparisonPredicateOperator"),
            ("int32 <= nil", [2, 3, 9, 11, 13], "Foundation NSComparisonPredicateOperator"),
            ("int64 >= nil", [2, 7, 10, 11], "Foundation NSComparisonPredicateOperator"),
            ("int32 > nil", [], "Foundation NSComparisonPredicateOperator"),
            (
                "int64 BETWEEN {10, 1}", [1, 3, 4, 5, 6, 12, 13],
                "Foundation NSBetweenPredicateOperator (bounds swapped)"
            ),
            ("int64 BETWEEN {1, 10}", [1, 3, 4, 5, 6, 12, 13], "Apple doc (BETWEEN)"),
            ("int32 IN {1, 3, nil}", [1, 4], "Foundation NSInPredicateOperator"),
            ("NOT int32 IN {1, 3}", [2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13], "Foundation NSInPredicateOperator"),
        ]
    }()
}

extension ConformanceSuite {
    static var edgeCaseConformance: ConformanceCase {
        ConformanceCase("edge-case predicates answer as Foundation does, on the driver and in memory") { harness in
            let fixture = try Fixture(harness, seeded: false)
            let context = fixture.context()
            for row in PredicateCorpus.edgeRows {
                let item = try context.insertNewObject(forEntityName: "Item")
                item["int16"] = row.label
                item["string"] = row.string
                item["int32"] = row.int32
                item["int64"] = row.int64
            }
            try context.save()
            var failures: [String] = []
            for (format, expected, source) in PredicateCorpus.edgeCases {
                let predicate = try FetchPredicate(format: format)
                let all = try fixture.context().fetch(FetchRequest(entityName: "Item"))
                let label = { (object: ManagedObject) in (object["int16"] as? Int).map(Int16.init) ?? -1 }
                let evaluated = Set(try all.filter { try predicate.evaluate(with: $0) }.map(label))
                if evaluated != expected {
                    failures.append(
                        "[\(format)] in memory: \(evaluated.sorted()), Foundation (\(source)): \(expected.sorted())")
                }
                let fetched = try fixture.context().fetch(FetchRequest(entityName: "Item", predicate: predicate))
                if Set(fetched.map(label)) != expected || fetched.count != expected.count {
                    failures.append(
                        "[\(format)] fetched: \(fetched.map(label).sorted()), Foundation (\(source)): \(expected.sorted())"
                    )
                }
                let counted = try fixture.context().count(for: FetchRequest(entityName: "Item", predicate: predicate))
                if counted != expected.count {
                    failures.append("[\(format)] count \(counted), expected \(expected.count)")
                }
            }
            try require(failures.isEmpty, failures.joined(separator: "\n"))
        }
    }
}
