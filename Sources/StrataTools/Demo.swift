import Foundation
import Strata
import StrataInMemory

/// The `strata demo` walkthrough: builds a small model, inserts a graph with relationships, saves,
/// fetches with predicates and sorts, shows delete rules and validation, and prints what happened.
public enum Demo {
    /// The demo's model: departments and employees (cascade and deny rules), and projects.
    public static func makeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Department",
                properties: [
                    .attribute("name", .string, isOptional: false),
                    .toMany("employees", "Employee", inverse: "department", deleteRule: .cascade),
                ]),
            EntityDescription(
                "Employee",
                properties: [
                    .attribute("name", .string, isOptional: false),
                    .attribute(
                        "age", .integer16, isOptional: false,
                        validation: ValidationRules(minimum: .integer(16), maximum: .integer(99))),
                    .attribute("email", .string, validation: ValidationRules(regularExpression: "[^@ ]+@[^@ ]+")),
                    .toOne("department", "Department", inverse: "employees"),
                    .toMany("projects", "Project", inverse: "members"),
                ]),
            EntityDescription(
                "Project",
                properties: [
                    .attribute("title", .string, isOptional: false),
                    .toMany("members", "Employee", inverse: "projects", deleteRule: .deny),
                ]),
        ])
    }

    /// Runs the demo on a store of `type` (the in-memory driver by default) and returns the lines
    /// it prints.
    public static func run(type: StoreType = .inMemory, url: URL? = nil) throws -> [String] {
        var out: [String] = []
        let model = try makeModel()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: type, at: url)
        out.append(
            "Strata demo on the \(store.type.name) driver (model hash \(model.versionHash.hexString.prefix(12)))")
        let context = ManagedObjectContext(coordinator: coordinator)

        let people: [(String, Int, String, String?)] = [
            ("Ada", 36, "Research", "ada@example.com"), ("Grace", 45, "Research", "grace@example.com"),
            ("Linus", 29, "Platform", nil), ("Margaret", 52, "Platform", "margaret@example.com"),
            ("Ken", 41, "Research", "ken@example.com"), ("Barbara", 33, "Platform", "barbara@example.com"),
        ]
        var departments: [String: ManagedObject] = [:]
        for name in ["Research", "Platform"] {
            let d = try context.insertNewObject(forEntityName: "Department")
            d["name"] = name
            departments[name] = d
        }
        let compiler = try context.insertNewObject(forEntityName: "Project")
        compiler["title"] = "Compiler"
        for (name, age, department, email) in people {
            let e = try context.insertNewObject(forEntityName: "Employee")
            e["name"] = name
            e["age"] = age
            e["email"] = email
            e["department"] = departments[department]
            if age > 40 { compiler.addObject(e, toRelationship: "members") }
        }
        try context.save()
        out.append("Saved 2 departments, \(people.count) employees and 1 project.")

        let reader = ManagedObjectContext(coordinator: coordinator)
        let request = FetchRequest(
            entityName: "Employee",
            predicate: try FetchPredicate(format: "age > %d AND department.name == %@", 30, "Research"),
            sortKeys: [SortKey("age", ascending: false)])
        out.append("Fetch \(request.predicate!.predicateFormat), by age descending:")  // set just above
        for e in try reader.fetch(request) {
            out.append("  \(e["name"] as? String ?? "?") (\(e["age"] as? Int ?? 0))")
        }
        let research = try reader.fetch(
            FetchRequest(entityName: "Department", predicate: FetchPredicate(format: "name == 'Research'")))[0]
        let staff = research.objects(forKey: "employees").compactMap { $0["name"] as? String }.sorted()
        out.append("Research employs \(staff.joined(separator: ", ")) (through the inverse relationship).")
        let members = try reader.fetch(FetchRequest(entityName: "Project"))[0].objects(forKey: "members")
        out.append("Compiler members: \(members.compactMap { $0["name"] as? String }.sorted().joined(separator: ", "))")

        let bad = try reader.insertNewObject(forEntityName: "Employee")
        bad["name"] = "Too Young"
        bad["age"] = 12
        bad["email"] = "not an email"
        do {
            try reader.save()
        } catch let error as ObjectValidationError {
            out.append("Validation refused a save with \(error.failures.count) failures:")
            for failure in error.failures { out.append("  - \(failure.property ?? "?"): \(failure.message)") }
            reader.rollback()
        }

        let project = try reader.fetch(FetchRequest(entityName: "Project"))[0]
        let ada = try reader.fetch(
            FetchRequest(entityName: "Employee", predicate: FetchPredicate(format: "name == 'Ada'")))[0]
        ada.addObject(project, toRelationship: "projects")
        try reader.save()
        reader.delete(project)
        do {
            try reader.save()
        } catch let error as ObjectValidationError {
            out.append("Deleting the project was denied: \(error.failures[0].message)")
            reader.rollback()
        }
        reader.delete(research)
        try reader.save()
        let left = try ManagedObjectContext(coordinator: coordinator).count(for: FetchRequest(entityName: "Employee"))
        out.append("Deleted Research; the cascade rule removed its employees: \(left) employees remain.")
        let stats = coordinator.rowCache.statistics
        out.append("Row cache: \(stats.count) rows, \(stats.hits) hits, \(stats.misses) misses.")
        return out
    }
}
