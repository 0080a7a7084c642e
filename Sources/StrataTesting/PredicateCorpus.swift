import Foundation
import Strata

/// Predicates over ``ConformanceModel`` that every driver must answer exactly as the in-memory
/// evaluator does (entity name, format string), and edge cases (``edgeCases``) that every driver
/// and the evaluator must answer as Foundation does.
public enum PredicateCorpus {
    /// Every entry.
    public static let entries: [(entity: String, format: String)] = [
        ("Employee", "TRUEPREDICATE"), ("Employee", "FALSEPREDICATE"),
        ("Employee", "name == 'Ann'"), ("Employee", "name = 'ann'"), ("Employee", "name ==[c] 'ann'"),
        ("Employee", "name !=[c] 'ANN'"), ("Employee", "name <> 'bob'"), ("Employee", "name ==[cd] 'zoe'"),
        ("Employee", "name ==[d] 'Emile'"), ("Employee", "name BEGINSWITH 'A'"), ("Employee", "name BEGINSWITH[c] 'a'"),
        ("Employee", "name ENDSWITH 'e'"), ("Employee", "name ENDSWITH[cd] 'E'"), ("Employee", "name CONTAINS 'an'"),
        ("Employee", "name CONTAINS[c] 'AN'"), ("Employee", "name CONTAINS[cd] 'ele'"), ("Employee", "name LIKE 'A*'"),
        ("Employee", "name LIKE[c] '?ve'"), ("Employee", "name LIKE '*-*'"), ("Employee", "name MATCHES '[A-Z].*'"),
        ("Employee", "name MATCHES[c] 'a.*'"), ("Employee", "age > 30"), ("Employee", "age >= 34"),
        ("Employee", "age < 27"), ("Employee", "age <= 27"), ("Employee", "age => 41 AND age =< 48"),
        ("Employee", "age BETWEEN {25, 40}"), ("Employee", "age IN {20, 27, 41}"), ("Employee", "NOT age IN {20, 27}"),
        ("Employee", "name IN {'Ann', 'bob', 'nobody'}"), ("Employee", "name IN[c] {'ANN', 'BOB'}"),
        ("Employee", "salary == nil"), ("Employee", "salary != nil"), ("Employee", "email == NULL OR age > 50"),
        ("Employee", "salary > 40000.5"), ("Employee", "salary < 35000 OR salary > 55000"),
        ("Employee", "salary > age"),
        ("Employee", "age > 30 AND (name BEGINSWITH 'A' OR name ENDSWITH 'e')"),
        ("Employee", "!(age > 30) && email != nil"),
        ("Employee", "department.name == 'Research'"), ("Employee", "department.name BEGINSWITH[c] 's'"),
        ("Employee", "department == nil"), ("Employee", "department.budget > 1000"),
        ("Employee", "mentor.name == 'Ann'"),
        ("Employee", "mentor.mentor == nil AND mentor != nil"), ("Employee", "mentees.@count > 0"),
        ("Employee", "mentees.@count == 0"), ("Employee", "ANY mentees.age > 40"), ("Employee", "ALL mentees.age > 25"),
        ("Employee", "NONE mentees.name BEGINSWITH 'A'"), ("Employee", "SOME mentees.email == nil"),
        ("Employee", "SUBQUERY(mentees, $m, $m.age > 30).@count >= 2"), ("Employee", "mentees.@max.age > 45"),
        ("Employee", "mentees.@avg.age < 40"), ("Employee", "mentees.@sum.age > 100"),
        ("Employee", "mentees.@min.age == 20"),
        ("Employee", "age * 2 > 80"), ("Employee", "age + 10 == 44"), ("Employee", "-age < -50"),
        ("Employee", "age / 7 > 4"),
        ("Department", "employees.@count >= 4"), ("Department", "ANY employees.name ==[c] 'DAN'"),
        ("Department", "manager.name == 'Ann'"), ("Department", "budget == 0"),
        ("Department", "name ==[cd] 'editions'"),
        ("Department", "SUBQUERY(employees, $e, $e.salary == nil).@count > 0"),
        ("Item", "int16 < 0"), ("Item", "int32 == nil"), ("Item", "int64 >= 50000000000"), ("Item", "decimal > 4.5"),
        ("Item", "double > 1.5"), ("Item", "float == 3.0"), ("Item", "bool == YES"), ("Item", "bool == FALSE"),
        ("Item", "string BEGINSWITH[c] 'alpha'"), ("Item", "string CONTAINS '*'"),
        ("Item", "string LIKE 'gamma\\\\**'"),
        ("Item", "string == nil"), ("Item", "date > CAST(700300000, 'NSDate')"),
        ("Item", "date < CAST(700000000.5, 'NSDate')"),
        ("Item", "uuid == nil"), ("Item", "uri != nil"), ("Item", "ANY tags.name == 'red'"),
        ("Item", "tags.@count == 2"),
        ("Item", "NONE tags.name ==[cd] 'eclat'"), ("Item", "int16 BETWEEN {-5, 5} AND bool == NO"),
        ("Vehicle", "wheels == 6"), ("Vehicle", "name BEGINSWITH[c] 'a' OR name ENDSWITH 'a'"), ("Car", "seats > 3"),
        ("Track", "ANY playlists.title == 'Mix'"), ("Playlist", "tracks.@count == 4"), ("Node", "parent.parent != nil"),
        ("Node", "children.@count == 0"), ("Node", "parent.label == 'root'"), ("Tag", "items.@count > 3"),
    ]
}

extension ConformanceSuite {
    static var predicateCases: [ConformanceCase] {
        [
            ConformanceCase("every corpus predicate matches exactly what the in-memory evaluator accepts") { harness in
                let fixture = try Fixture(harness)
                var failures: [String] = []
                for (entity, format) in PredicateCorpus.entries {
                    let context = fixture.context()
                    let predicate = try FetchPredicate(format: format)
                    let all = try context.fetch(FetchRequest(entityName: entity))
                    let expected = Set(try all.filter { try predicate.evaluate(with: $0) }.map(\.objectID))
                    let actual = try fixture.context().fetch(FetchRequest(entityName: entity, predicate: predicate))
                    if Set(actual.map(\.objectID)) != expected || actual.count != expected.count {
                        failures.append(
                            "\(entity) [\(format)]: expected \(expected.count) objects, got \(actual.count)")
                    }
                    let counted = try fixture.context().count(
                        for: FetchRequest(entityName: entity, predicate: predicate))
                    if counted != expected.count {
                        failures.append("\(entity) [\(format)]: count \(counted), expected \(expected.count)")
                    }
                }
                try require(failures.isEmpty, failures.joined(separator: "\n"))
            },
            edgeCaseConformance,
            ConformanceCase("predicates with arguments and variables fetch the same rows as literals") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let literal = try fetch(context, "Employee", "age > 30 AND name BEGINSWITH[c] 'a'").map(\.objectID)
                let arguments = try context.fetch(
                    FetchRequest(
                        entityName: "Employee",
                        predicate: FetchPredicate(
                            format: "%K > %d AND %K BEGINSWITH[c] %@", PredicateKeyPath("age"), 30,
                            PredicateKeyPath("name"), "a"))
                ).map(\.objectID)
                let variables = try context.fetch(
                    FetchRequest(
                        entityName: "Employee",
                        predicate: FetchPredicate(format: "age > $AGE AND name BEGINSWITH[c] $P")
                            .withSubstitutionVariables(["AGE": 30, "P": "a"]))
                ).map(\.objectID)
                try requireEqual(Set(arguments), Set(literal), "arguments")
                try requireEqual(Set(variables), Set(literal), "variables")
                let ann = try fetch(context, "Employee", "name == 'Ann'")[0]
                let mentees = try context.fetch(
                    FetchRequest(
                        entityName: "Employee", predicate: FetchPredicate(format: "mentor == %@", ann.objectID)))
                try requireEqual(
                    Set(mentees.map(\.objectID)), Set(ann.objects(forKey: "mentees").map(\.objectID)),
                    "object IDs as arguments")
                let byObject = try context.fetch(
                    FetchRequest(entityName: "Employee", predicate: FetchPredicate(format: "mentor == %@", ann)))
                try requireEqual(Set(byObject.map(\.objectID)), Set(mentees.map(\.objectID)), "objects as arguments")
            },
        ]
    }
}
