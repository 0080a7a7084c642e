import Foundation
import Strata

/// A small object graph for evaluating predicates: attributes, to-one and to-many relationships.
final class GraphObject: PredicateEvaluable {
    let id: RowID
    var attributes: [String: StoreValue]
    var toOne: [String: GraphObject?] = [:]
    var toMany: [String: [GraphObject]] = [:]

    init(_ primaryKey: Int64, entity: Int32 = 1, _ attributes: [String: StoreValue] = [:]) {
        self.id = RowID(entity: entity, primaryKey: primaryKey)
        self.attributes = attributes
    }

    func keyValue(forKey key: String) throws -> KeyValue {
        if let value = attributes[key] { return .value(value) }
        if let object = toOne[key] { return object.map { .object($0) } ?? .value(.null) }
        if let objects = toMany[key] { return .objects(objects) }
        throw FetchPredicateError(.unknownKeyPath, "no key '\(key)'")
    }

    var selfValue: StoreValue { .reference(id) }
}

/// The graph most evaluation tests use.
///
/// ada (36, Engineering, friends alan 41 and grace 45, tags swift/linux) works in engineering,
/// whose head is grace. edsger (50) has no department and no friends.
struct PeopleFixture {
    let ada: GraphObject
    let alan: GraphObject
    let grace: GraphObject
    let edsger: GraphObject
    let engineering: GraphObject

    init() {
        let reference = Date(timeIntervalSinceReferenceDate: 0)
        engineering = GraphObject(100, entity: 2, ["name": .string("Engineering"), "budget": .double(1_000_000.5)])
        ada = GraphObject(
            1,
            [
                "name": .string("Ada"), "age": .integer(36), "salary": .decimal(Decimal(string: "1234.50")!),
                "height": .double(1.65), "active": .bool(true), "nickname": .null,
                "birthday": .date(reference.addingTimeInterval(-86_400 * 365)), "city": .string("Zürich"),
                "email": .string("ada@example.com"),
                "id": .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000001")!),
            ])
        alan = GraphObject(
            2, ["name": .string("Alan"), "age": .integer(41), "active": .bool(false), "nickname": .string("Al")])
        grace = GraphObject(
            3, ["name": .string("Grace"), "age": .integer(45), "active": .bool(true), "nickname": .null])
        edsger = GraphObject(
            4, ["name": .string("Edsger"), "age": .integer(50), "active": .bool(true), "nickname": .null])
        ada.toOne["department"] = engineering
        ada.toMany["friends"] = [alan, grace]
        ada.attributes["tags"] = nil
        alan.toMany["friends"] = [ada]
        grace.toMany["friends"] = []
        edsger.toMany["friends"] = []
        edsger.toOne["department"] = .some(nil)
        alan.toOne["department"] = engineering
        grace.toOne["department"] = engineering
        engineering.toOne["head"] = grace
        engineering.toMany["members"] = [ada, alan, grace]
    }
}

/// Tags as a collection of scalar values.
struct TaggedObject: PredicateEvaluable {
    var tags: [StoreValue]
    var scores: [StoreValue]

    func keyValue(forKey key: String) throws -> KeyValue {
        switch key {
        case "tags": .values(tags)
        case "scores": .values(scores)
        default: throw FetchPredicateError(.unknownKeyPath, "no key '\(key)'")
        }
    }

    var selfValue: StoreValue { .null }
}

/// Evaluates a format string against an object.
func evaluate(_ format: String, _ object: any PredicateEvaluable, _ arguments: any PredicateArgument...) throws -> Bool
{
    try FetchPredicate(format: format, argumentArray: arguments).evaluate(with: object)
}

/// The code of the `FetchPredicateError` `body` throws, or `nil` when it throws nothing.
func predicateErrorCode(_ body: () throws -> Void) -> FetchPredicateError.Code? {
    do {
        try body()
        return nil
    } catch let error as FetchPredicateError {
        return error.code
    } catch {
        return nil
    }
}
