import Foundation
import Strata
import StrataSQLite
import StrataTesting

/// The SQLite driver's predicate translation against the evaluator: a random predicate
/// (``PredicateGenerator``) is fetched through the driver on a seeded store, and wherever the driver
/// says it applied the predicate, the rows must be exactly those the in-memory evaluator accepts
/// among all the entity's rows.
final class SQLPredicateTarget: FuzzTarget {
    private let coordinator: PersistentStoreCoordinator
    private let driver: any StoreDriver
    private let model = ConformanceModel.model
    private var rows: [Int32: [RowSnapshot]] = [:]
    private var byID: [RowID: RowSnapshot] = [:]
    private var entity: EntityDescription
    private var format = ""

    init(setup: TargetSetup) throws {
        let url = setup.scratch.file("predicates.sqlite")
        try BaseStores.make(.sqlite, at: url)
        coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(isReadOnly: true))
        driver = store.driver
        for entity in model.entities {
            let all = try driver.fetch(StoreFetch(entity: entity)).rows
            rows[entity.entityNumber] = all
            for row in all { byID[row.id] = row }
        }
        entity = model.entities[0]
    }

    var artifacts: [URL] { [] }

    func prepare(_ index: Int, _ random: inout SeededGenerator) throws -> String {
        let candidates = model.entities.filter { !(rows[$0.entityNumber] ?? []).isEmpty }
        entity = candidates[Int.random(in: 0..<candidates.count, using: &random)]
        format = PredicateGenerator.format(for: entity, in: model, using: &random)
        return "\(entity.name): \(format)"
    }

    func run() throws -> String {
        let predicate: FetchPredicate
        do {
            predicate = try FetchPredicate(format: format)
        } catch is FetchPredicateError {
            return "unparsed"
        }
        // The reference: the evaluator over every row of the entity (subentities included).
        let numbers = Set(entity.hierarchyNumbers)
        let candidates = byID.values.filter { numbers.contains($0.id.entity) }
        var expected: Set<RowID> = []
        var evaluatorError: (any Error)?
        for row in candidates {
            let view = RowView(
                row, model: model, lookup: { [byID] in byID[$0] },
                related: { [driver, model] id, slot in
                    guard let entity = model.entity(number: id.entity) else { return [] }
                    return try driver.relatedRows(RelatedRowsRequest(entity: entity, slot: slot, sources: [id]))[id]
                        ?? []
                })
            do {
                if try predicate.evaluate(with: view) { expected.insert(row.id) }
            } catch {
                evaluatorError = error
                break
            }
        }
        var request = StoreFetch(entity: entity)
        request.predicate = predicate
        let result: StoreFetchResult
        do {
            result = try driver.fetch(request)
        } catch {
            guard Outcome.typedName(error) != nil else {
                throw CaseFailure("the driver threw an error of an unexpected type: \(Outcome.describe(error))")
            }
            if evaluatorError != nil { return "both-refused" }
            throw CaseFailure(
                "the driver refused a predicate the evaluator answers (\(expected.count) rows): \(Outcome.describe(error))"
            )
        }
        guard result.appliedPredicate else { return "declined" }
        if let evaluatorError {
            throw CaseFailure(
                "the driver answered \(result.rows.count) rows where the evaluator fails: \(Outcome.describe(evaluatorError))"
            )
        }
        let answered = Set(result.rows.map(\.id))
        guard answered == expected else {
            let extra = answered.subtracting(expected).sorted { $0.primaryKey < $1.primaryKey }.prefix(5)
            let missing = expected.subtracting(answered).sorted { $0.primaryKey < $1.primaryKey }.prefix(5)
            throw CaseFailure(
                "SQL and the evaluator disagree: \(answered.count) rows vs \(expected.count); extra \(extra.map { describe($0) }), missing \(missing.map { describe($0) })"
            )
        }
        return "agree"
    }

    private func describe(_ id: RowID) -> String {
        guard let row = byID[id], let entity = model.entity(number: id.entity) else { return "\(id)" }
        let values = zip(entity.properties, row.values).filter { $0.0.attribute != nil }.prefix(12)
            .map { "\($0.0.name)=\($0.1)" }
        return "\(entity.name)/p\(id.primaryKey){\(values.joined(separator: ","))}"
    }
}
