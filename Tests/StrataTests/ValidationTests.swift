import Foundation
import Strata
import StrataInMemory
import Testing

@Suite("Validation at save")
struct ValidationTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Account",
                properties: [
                    .attribute(
                        "handle", .string, isOptional: false,
                        validation: ValidationRules(minimumLength: 3, maximumLength: 8, regularExpression: "[a-z]+")),
                    .attribute(
                        "level", .integer32, validation: ValidationRules(minimum: .integer(1), maximum: .integer(10))),
                    .attribute("score", .double, validation: ValidationRules(minimum: .double(0))),
                    .attribute(
                        "joined", .date,
                        validation: ValidationRules(
                            minimum: .date(Date(timeIntervalSinceReferenceDate: 0)),
                            maximum: .date(Date(timeIntervalSinceReferenceDate: 1e9)))),
                    .attribute("note", .string, isTransient: true),
                    .toMany("devices", "Device", inverse: "account", minCount: 1, maxCount: 2),
                    .toOne("plan", "Plan", inverse: "accounts", isOptional: false),
                ],
                uniquenessConstraints: [["handle"]]),
            EntityDescription(
                "Device", properties: [.attribute("name", .string), .toOne("account", "Account", inverse: "devices")]),
            EntityDescription(
                "Plan", properties: [.attribute("name", .string), .toMany("accounts", "Account", inverse: "plan")]),
        ])
    }

    func context() throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(type: .inMemory)
        return ManagedObjectContext(coordinator: coordinator)
    }

    func codes(_ body: () throws -> Void) -> [ObjectValidationError.Code] {
        do {
            try body()
            return []
        } catch let error as ObjectValidationError {
            return error.failures.map(\.code)
        } catch {
            return [.custom]
        }
    }

    @Test("every rule of an object is checked and all failures come back together")
    func everyRule() throws {
        let context = try self.context()
        let account = try context.insertNewObject(forEntityName: "Account")
        account["handle"] = "AB"
        account["level"] = 11
        account["score"] = -1.0
        account["joined"] = Date(timeIntervalSinceReferenceDate: -5)
        let found = Set(codes { try context.save() })
        #expect(
            found == [
                .stringTooShort, .stringPatternMismatch, .numberTooLarge, .numberTooSmall, .dateTooSoon,
                .relationshipTooFewItems, .missingMandatoryProperty,
            ])
        #expect(try context.count(for: FetchRequest(entityName: "Account")) == 1)
        let stored = try ManagedObjectContext(coordinator: context.coordinator).count(
            for: FetchRequest(entityName: "Account"))
        #expect(stored == 0)
    }

    @Test("a valid object saves; too many items and too long strings fail")
    func countsAndLengths() throws {
        let context = try self.context()
        let plan = try context.insertNewObject(forEntityName: "Plan")
        let account = try context.insertNewObject(forEntityName: "Account")
        account["handle"] = "ada"
        account["plan"] = plan
        let devices = try (0..<3).map { _ in try context.insertNewObject(forEntityName: "Device") }
        account.setValue(Set(devices.prefix(2)), forKey: "devices")
        try context.save()
        account.addObject(devices[2], toRelationship: "devices")
        account["handle"] = "muchtoolong"
        #expect(Set(codes { try context.save() }) == [.relationshipTooManyItems, .stringTooLong])
    }

    @Test("unique constraints catch duplicates among unsaved objects and against the store")
    func uniqueness() throws {
        let context = try self.context()
        let plan = try context.insertNewObject(forEntityName: "Plan")
        func account(_ handle: String) throws -> ManagedObject {
            let a = try context.insertNewObject(forEntityName: "Account")
            a["handle"] = handle
            a["plan"] = plan
            a.addObject(try context.insertNewObject(forEntityName: "Device"), toRelationship: "devices")
            return a
        }
        _ = try account("ada")
        _ = try account("ada")
        #expect(codes { try context.save() } == [.uniqueConstraint])
        context.rollback()
        let p2 = try context.insertNewObject(forEntityName: "Plan")
        _ = p2
        let first = try context.insertNewObject(forEntityName: "Account")
        first["handle"] = "bob"
        first["plan"] = p2
        first.addObject(try context.insertNewObject(forEntityName: "Device"), toRelationship: "devices")
        try context.save()
        let second = try context.insertNewObject(forEntityName: "Account")
        second["handle"] = "bob"
        second["plan"] = p2
        second.addObject(try context.insertNewObject(forEntityName: "Device"), toRelationship: "devices")
        #expect(codes { try context.save() } == [.uniqueConstraint])
        first["handle"] = "robert"
        try context.save()
    }

    @Test("custom validateForInsert errors are reported with the model's failures")
    func customValidation() throws {
        final class Picky: ManagedObject {
            override func validateForInsert() throws {
                throw ObjectValidationError(failures: [
                    .init(objectID: objectID, entity: entity.name, property: "name", code: .custom, message: "no")
                ])
            }
        }
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Picky", properties: [.attribute("name", .string, isOptional: false)], managedObjectClass: Picky.self)
        ])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(coordinator: coordinator)
        _ = try context.insertNewObject(forEntityName: "Picky")
        #expect(Set(codes { try context.save() }) == [.custom, .missingMandatoryProperty])
    }
}
