import Foundation
import Strata
import Testing

@Suite("Predicate validation against a model")
struct PredicateValidationTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Person",
                properties: [
                    .attribute("name", .string), .attribute("age", .integer16), .attribute("salary", .decimal),
                    .attribute("birthday", .date), .attribute("active", .boolean), .attribute("photo", .binaryData),
                    .attribute("id", .uuid), .attribute("home", .uri), .attribute("extra", .transformable),
                    .toOne("department", "Department", inverse: "members"),
                    .toMany("friends", "Person", inverse: "friends"),
                ]),
            EntityDescription(
                "Department",
                properties: [
                    .attribute("name", .string), .attribute("budget", .double),
                    .toMany("members", "Person", inverse: "department"),
                    .toMany("projects", "Project", inverse: "department"),
                ]),
            EntityDescription(
                "Project",
                properties: [
                    .attribute("title", .string), .toOne("department", "Department", inverse: "projects"),
                ]),
        ])
    }

    @Test(
        "valid predicates pass",
        arguments: [
            "name BEGINSWITH[cd] 'a' AND age > 30", "department.name == 'R&D'", "ANY friends.age > 40",
            "friends.@count > 2", "department.members.@avg.age > 30", "SUBQUERY(friends, $f, $f.age > age).@count > 0",
            "birthday > CAST(0, 'NSDate')", "active == YES", "active == 1", "age == 3.5", "salary < 10",
            "department == nil", "name IN {'a', 'b'}", "age BETWEEN {1, 5}", "'x' IN friends.name",
            "friends CONTAINS %@", "ALL department.projects.title != nil", "lowercase(name) == 'x'",
            "age + 1 > 3", "name == $NAME", "SELF == %@", "extra == 1", "department.members.@max.birthday < now()",
            "ANY department.projects.department.name == 'x'", "NOT ANY friends.name == 'Bo'", "TRUEPREDICATE",
            "name MATCHES '[a-z]+'", "id == CAST('00000000-0000-0000-0000-000000000001', 'NSUUID')",
        ])
    func valid(format: String) throws {
        let model = try Self.model()
        let person = try #require(model.entity(named: "Person"))
        let predicate = try FetchPredicate(
            format: format, argumentArray: format.contains("%@") ? [RowID(entity: 1, primaryKey: 1)] : [])
        #expect(throws: Never.self) { try predicate.validate(for: person, in: model) }
    }

    @Test(
        "invalid predicates report the entity and the problem",
        arguments: [
            ("nmae == 'x'", FetchPredicateError.Code.unknownKeyPath), ("department.nmae == 'x'", .unknownKeyPath),
            ("name.first == 'x'", .unknownKeyPath), ("SUBQUERY(friends, $f, $f.agee > 1).@count > 0", .unknownKeyPath),
            ("friends.friends.name == 'x'", .unsupported), ("ANY friends.friends.age > 1", .unsupported),
            ("name == CAST(0, 'NSDate')", .typeMismatch), ("birthday == 'yesterday'", .typeMismatch),
            ("age == 'x'", .typeMismatch), ("age BEGINSWITH 'x'", .typeMismatch), ("name LIKE 5", .typeMismatch),
            ("friends.age > 40", .typeMismatch), ("ANY name == 'x'", .typeMismatch), ("name.@count > 1", .typeMismatch),
            ("friends.@sum.name > 1", .typeMismatch), ("department == 'x'", .typeMismatch),
            ("age IN {1, 'x'}", .typeMismatch),
            ("age BETWEEN {1, 'z'}", .typeMismatch), ("name MATCHES '(['", .invalidRegularExpression),
            ("photo == 1", .typeMismatch), ("id == 'x'", .typeMismatch), ("age CONTAINS 1", .typeMismatch),
        ])
    func invalid(format: String, code: FetchPredicateError.Code) throws {
        let model = try Self.model()
        let person = try #require(model.entity(named: "Person"))
        let predicate = try FetchPredicate(format: format)
        let error = try #require(throws: FetchPredicateError.self) { try predicate.validate(for: person, in: model) }
        #expect(error.code == code, "\(error)")
        #expect(error.message.contains("Person") || error.message.contains("pattern"), "\(error)")
    }
}
