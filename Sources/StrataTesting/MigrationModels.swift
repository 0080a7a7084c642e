import Foundation
import Strata

/// Three versions of one model, for the migration cases of the conformance suite, the kill tests
/// and the benchmarks.
///
/// - ``version1``: `Person` (`name`, `age` Integer 16, `nickname`, `city`), its subentity
///   `Employee` (`salary`), `Pet` (to-one `owner` ↔ to-many `Person.pets`), `Club` (many-to-many
///   `members` ↔ `Person.clubs`).
/// - ``version2``: the kind of change an app ships between versions: `Person` renamed
///   `Member` and `city` renamed `town` (renaming identifiers), `nickname` removed, `status`
///   added (required, default `"active"`), `age` widened to Integer 64, `note` added (optional).
/// - ``version3``: ``version2`` with `Member.email` and `Pet.tag` added (both optional), so a
///   chain 1 → 2 → 3 can be staged.
public enum MigrationModels {
    /// Version 1.
    public static let version1: ManagedObjectModel = {
        let person = EntityDescription(
            "Person",
            properties: [
                .attribute("name", .string, isOptional: false), .attribute("age", .integer16),
                .attribute("nickname", .string), .attribute("city", .string),
                .toMany("pets", "Pet", inverse: "owner", deleteRule: .cascade),
                .toMany("clubs", "Club", inverse: "members"),
            ])
        let employee = EntityDescription("Employee", parent: "Person", properties: [.attribute("salary", .double)])
        let pet = EntityDescription(
            "Pet", properties: [.attribute("name", .string), .toOne("owner", "Person", inverse: "pets")])
        let club = EntityDescription(
            "Club", properties: [.attribute("title", .string), .toMany("members", "Person", inverse: "clubs")])
        // A fixed, valid model.
        return try! ManagedObjectModel(entities: [person, employee, pet, club], versionIdentifiers: ["1"])
    }()

    /// Version 2: the change to ``version1``.
    public static let version2: ManagedObjectModel = {
        var town = AttributeDescription("town", .string)
        town.renamingIdentifier = "city"
        let member = EntityDescription(
            "Member",
            properties: [
                .attribute("name", .string, isOptional: false), .attribute("age", .integer64), .attribute(town),
                .attribute("status", .string, isOptional: false, defaultValue: .string("active")),
                .attribute("note", .string),
                .toMany("pets", "Pet", inverse: "owner", deleteRule: .cascade),
                .toMany("clubs", "Club", inverse: "members"),
            ], renamingIdentifier: "Person")
        let employee = EntityDescription("Employee", parent: "Member", properties: [.attribute("salary", .double)])
        let pet = EntityDescription(
            "Pet", properties: [.attribute("name", .string), .toOne("owner", "Member", inverse: "pets")])
        let club = EntityDescription(
            "Club", properties: [.attribute("title", .string), .toMany("members", "Member", inverse: "clubs")])
        // A fixed, valid model.
        return try! ManagedObjectModel(entities: [member, employee, pet, club], versionIdentifiers: ["2"])
    }()

    /// Version 3: ``version2`` with `Member.email` and `Pet.tag` (both optional).
    public static let version3: ManagedObjectModel = {
        var town = AttributeDescription("town", .string)
        town.renamingIdentifier = "city"
        let member = EntityDescription(
            "Member",
            properties: [
                .attribute("name", .string, isOptional: false), .attribute("age", .integer64), .attribute(town),
                .attribute("status", .string, isOptional: false, defaultValue: .string("active")),
                .attribute("note", .string),
                .attribute("email", .string),
                .toMany("pets", "Pet", inverse: "owner", deleteRule: .cascade),
                .toMany("clubs", "Club", inverse: "members"),
            ], renamingIdentifier: "Person")
        let employee = EntityDescription("Employee", parent: "Member", properties: [.attribute("salary", .double)])
        let pet = EntityDescription(
            "Pet",
            properties: [
                .attribute("name", .string), .attribute("tag", .integer32), .toOne("owner", "Member", inverse: "pets"),
            ])
        let club = EntityDescription(
            "Club", properties: [.attribute("title", .string), .toMany("members", "Member", inverse: "clubs")])
        // A fixed, valid model.
        return try! ManagedObjectModel(entities: [member, employee, pet, club], versionIdentifiers: ["3"])
    }()

    /// Fills a store of ``version1`` with `people` people (every fifth an employee), a pet for
    /// each of the first half, and three clubs whose members are every second, third and fifth
    /// person; saves every 1,000 people.
    public static func seed(_ context: ManagedObjectContext, people: Int) throws {
        var clubs: [ManagedObject] = []
        for index in 0..<3 {
            let club = try context.insertNewObject(forEntityName: "Club")
            club["title"] = "club \(index)"
            clubs.append(club)
        }
        for index in 0..<people {
            let person = try context.insertNewObject(forEntityName: index % 5 == 4 ? "Employee" : "Person")
            person["name"] = "person \(index)"
            person["age"] = index % 120
            person["nickname"] = "nick \(index)"
            person["city"] = index % 7 == 0 ? nil : "city \(index % 13)"
            if index % 5 == 4 { person["salary"] = Double(index) * 1.5 }
            if index < people / 2 {
                let pet = try context.insertNewObject(forEntityName: "Pet")
                pet["name"] = "pet \(index)"
                pet["owner"] = person
            }
            for (position, step) in [2, 3, 5].enumerated() where index % step == 0 {
                person.addObject(clubs[position], toRelationship: "clubs")
            }
            if index % 1_000 == 999 { try context.save() }
        }
        try context.save()
    }

    /// Checks that a store of ``version2`` (or ``version3``) holds exactly what ``seed(_:people:)``
    /// put in a store of ``version1``, migrated: returns the differences, empty when none.
    public static func differences(_ context: ManagedObjectContext, people: Int) throws -> [String] {
        var problems: [String] = []
        let members = try context.fetch(FetchRequest(entityName: "Member"))
        if members.count != people { problems.append("\(members.count) members, expected \(people)") }
        let byName = Dictionary(members.compactMap { member in (member["name"] as? String).map { ($0, member) } }) {
            a, _ in a
        }
        for index in 0..<people {
            guard let member = byName["person \(index)"] else {
                problems.append("person \(index) is missing")
                continue
            }
            let isEmployee = index % 5 == 4
            if (member.entity.name == "Employee") != isEmployee {
                problems.append("person \(index) is a \(member.entity.name)")
            }
            if member["age"] as? Int != index % 120 {
                problems.append("person \(index): age \(member["age"] ?? "nil")")
            }
            let town = index % 7 == 0 ? nil : "city \(index % 13)"
            if member["town"] as? String != town { problems.append("person \(index): town \(member["town"] ?? "nil")") }
            if member["status"] as? String != "active" {
                problems.append("person \(index): status \(member["status"] ?? "nil")")
            }
            if member["note"] != nil { problems.append("person \(index): note \(member["note"] ?? "")") }
            if isEmployee, member["salary"] as? Double != Double(index) * 1.5 {
                problems.append("person \(index): salary")
            }
            let pets = member.objects(forKey: "pets").compactMap { $0["name"] as? String }
            if pets != (index < people / 2 ? ["pet \(index)"] : []) { problems.append("person \(index): pets \(pets)") }
            let clubs = Set(member.objects(forKey: "clubs").compactMap { $0["title"] as? String })
            let expected = Set([2, 3, 5].enumerated().filter { index % $0.element == 0 }.map { "club \($0.offset)" })
            if clubs != expected { problems.append("person \(index): clubs \(clubs.sorted())") }
            if problems.count > 20 { break }
        }
        let pets = try context.count(for: FetchRequest(entityName: "Pet"))
        if pets != people / 2 { problems.append("\(pets) pets, expected \(people / 2)") }
        return problems
    }
}
