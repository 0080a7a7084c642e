import Foundation
import Strata
import StrataTesting
import Synchronization
import Testing

@testable import StrataLMDB

@Suite("LMDB indexes and queries")
struct LMDBQueryTests {
    static let model: ManagedObjectModel = {
        let person = EntityDescription(
            "Person",
            properties: [
                .attribute(AttributeDescription("name", .string, isIndexed: true)),
                .attribute(AttributeDescription("age", .integer32, isIndexed: true)),
                .attribute("score", .double), .toOne("team", "Team", inverse: "members"),
            ],
            indexes: [FetchIndexDescription(name: "byScore", elements: [.init("score")])])
        let personWithCode = EntityDescription(
            "Person", properties: person.ownProperties + [.attribute("code", .string)],
            uniquenessConstraints: [["code"]], indexes: person.indexes)
        let team = EntityDescription(
            "Team", properties: [.attribute("name", .string), .toMany("members", "Person", inverse: "team")])
        // A fixed, valid model.
        return try! ManagedObjectModel(entities: [personWithCode, team])
    }()

    /// A seeded store: `people` people (300 unless given) in 5 teams.
    static func seeded(_ directory: TemporaryDirectory, people: Int = 300) throws -> (
        PersistentStoreCoordinator, LMDBDriver, [ManagedObject]
    ) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .lmdb, at: directory.file("people.lmdb"))
        let context = ManagedObjectContext(coordinator: coordinator)
        var teams: [ManagedObject] = []
        for index in 0..<5 {
            let team = try context.insertNewObject(forEntityName: "Team")
            team["name"] = "team \(index)"
            teams.append(team)
        }
        let names = ["Ann", "bob", "Émile", "e\u{301}mile", "Zoë", "", "Chloé"]
        for index in 0..<people {
            let person = try context.insertNewObject(forEntityName: "Person")
            person["name"] = index % 11 == 0 ? nil : names[index % names.count] + "\(index % 13)"
            person["age"] = index % 17 == 0 ? nil : (index * 7) % 90
            person["score"] = Double(index % 23) - 11.5
            person["code"] = "c\(index)"
            person["team"] = index % 9 == 0 ? nil : teams[index % 5]
        }
        try context.save()
        // The coordinator attached an LMDB store.
        return (coordinator, store.driver as! LMDBDriver, teams)
    }

    @Test("indexed equality, IN, ranges and to-one keys answer exactly as the in-memory evaluator, through indexes")
    func indexedPredicates() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-query")
        let (_, driver, teams) = try Self.seeded(directory)
        let person = try #require(Self.model.entity(named: "Person"))
        let all = try driver.fetch(StoreFetch(entity: person)).rows
        #expect(all.count == 300)
        let lookup = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })
        let formats = [
            "age == 14", "age > 40", "age <= 3", "age >= 89", "age < 0", "age BETWEEN {10, 20}", "age IN {7, 14, 99}",
            "age == nil", "name == 'Ann1'", "name == 'Émile2'", "name > 'b'", "name < 'Chloé5'",
            "name IN {'bob3', 'Zoë4'}",
            "name == ''", "name == nil", "score == 3.5", "score > 0 AND age < 50", "age == 14.0", "age > 40.5",
            "code == 'c17'", "31 < age", "age BETWEEN {20, 10}",
        ]
        for format in formats {
            let predicate = try FetchPredicate(format: format)
            var request = StoreFetch(entity: person)
            request.predicate = predicate
            let plan = QueryPlan.make(predicate, entity: person, entities: request.entityNumbers, layout: driver.layout)
            if case .scan = plan, format != "age > 40.5" { Issue.record("\(format) did not use an index") }
            let expected = try all.filter {
                try predicate.evaluate(with: RowView($0, model: Self.model, lookup: { lookup[$0] }))
            }.map(\.id)
            #expect(try driver.fetch(request).rows.map(\.id) == expected, "\(format)")
            request.resultKind = .count
            #expect(try driver.fetch(request).count == expected.count, "count \(format)")
        }
        let team = teams[2].objectID.rowID
        let predicate = FetchPredicate.comparison(
            ComparisonPredicate(.keyPath("team"), .equal, .constant(.reference(team))))
        var request = StoreFetch(entity: person)
        request.predicate = predicate
        guard
            case .referrers = QueryPlan.make(
                predicate, entity: person, entities: request.entityNumbers, layout: driver.layout)
        else {
            Issue.record("team == object did not use the reverse index")
            return
        }
        // in the model
        let expected = all.filter { $0.values[person.index(ofProperty: "team")!] == .reference(team) }.map(\.id)
        #expect(try driver.fetch(request).rows.map(\.id) == expected)
        let members = try driver.relatedRows(
            RelatedRowsRequest(entity: Self.model.entity(named: "Team")!, slot: 1, sources: [team]))  // in the model
        #expect(members[team] == expected)
    }

    @Test("sorts on an indexed attribute stream in order with offset and limit, matching the core's sorter")
    func streamedSorts() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-query")
        let (_, driver, _) = try Self.seeded(directory)
        let person = try #require(Self.model.entity(named: "Person"))
        let all = try driver.fetch(StoreFetch(entity: person)).rows
        let lookup = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })
        for keys in [
            [SortKey("age")], [SortKey("age", ascending: false), SortKey("name")], [SortKey("name")],
            [SortKey("name", ascending: false)], [SortKey("score"), SortKey("code")],
        ] {
            for (offset, limit) in [(0, 10), (25, 40), (290, 30), (0, 1)] {
                for format in [nil, "score > -3"] {
                    var request = StoreFetch(entity: person)
                    request.sort = keys
                    request.offset = offset
                    request.limit = limit
                    request.predicate = try format.map { try FetchPredicate(format: $0) }
                    var matching = all
                    if let predicate = request.predicate {
                        matching = try all.filter {
                            try predicate.evaluate(with: RowView($0, model: Self.model, lookup: { lookup[$0] }))
                        }
                    }
                    let sorted = try RowSorter.sort(matching, by: keys, model: Self.model, lookup: { lookup[$0] })
                    let expected = Array(sorted.dropFirst(offset).prefix(limit)).map(\.id)
                    #expect(
                        try driver.fetch(request).rows.map(\.id) == expected,
                        "\(keys) \(offset)/\(limit) \(format ?? "")")
                }
            }
        }
    }

    @Test("the unique constraint is enforced by the driver at save, and the failed save changes nothing")
    func uniqueAtSave() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-query")
        let (_, driver, _) = try Self.seeded(directory)
        let person = try #require(Self.model.entity(named: "Person"))
        let before = try driver.fetch(StoreFetch(entity: person)).rows
        let key = try driver.allocatePrimaryKeys(forEntity: person.entityNumber, count: 1).lowerBound
        var values = before[0].values
        values[person.index(ofProperty: "code")!] = .string("c5")  // in the model
        var batch = ChangeBatch()
        batch.inserts = [
            RowSnapshot(id: RowID(entity: person.entityNumber, primaryKey: key), version: 0, values: values)
        ]
        let error = try #require(throws: StoreError.self) { _ = try driver.apply(batch) }
        #expect(error.code == .constraint)
        #expect(error.message.contains("code"))
        #expect(try driver.fetch(StoreFetch(entity: person)).rows == before)
    }

    @Test("a read transaction keeps its snapshot while a write commits (MVCC), and later reads see the commit")
    func snapshots() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-query")
        let (_, driver, _) = try Self.seeded(directory)
        let person = try #require(Self.model.entity(named: "Person"))
        let first = try driver.fetch(StoreFetch(entity: person)).rows[0]
        let slot = try #require(person.index(ofProperty: "score"))
        let seen = try driver.environment.read { txn -> StoreValue? in
            let writer = Thread {
                var values = first.values
                values[slot] = .double(1_000)
                var batch = ChangeBatch()
                batch.updates = [
                    RowUpdate(id: first.id, expectedVersion: first.version, values: values, changedSlots: [slot])
                ]
                _ = try? driver.apply(batch)
            }
            writer.start()
            while !writer.isFinished { usleep(1_000) }
            return try driver.row(first.id, txn)?.values[slot]
        }
        #expect(seen == first.values[slot])
        #expect(try driver.rows(for: [first.id]).first?.values[slot] == .double(1_000))
    }

    @Test("read transactions reused from the pool see every commit, also with readers on several threads")
    func pooledReaders() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-query")
        let (_, driver, _) = try Self.seeded(directory)
        let person = try #require(Self.model.entity(named: "Person"))
        let slot = try #require(person.index(ofProperty: "score"))
        let id = try driver.fetch(StoreFetch(entity: person)).rows[0].id
        func setScore(_ score: Double) throws {
            let row = try #require(try driver.rows(for: [id]).first)
            var values = row.values
            values[slot] = .double(score)
            var batch = ChangeBatch()
            batch.updates = [RowUpdate(id: id, expectedVersion: row.version, values: values, changedSlots: [slot])]
            _ = try driver.apply(batch)
        }
        for round in 1...20 {
            try setScore(Double(round))
            #expect(try driver.rows(for: [id]).first?.values[slot] == .double(Double(round)), "round \(round)")
        }
        // Readers on four threads while the scores keep changing: every read sees a committed
        // score (a whole number) and none fails.
        let failures = Locked(0)
        let done = DispatchGroup()
        for _ in 0..<4 {
            done.enter()
            Thread {
                defer { done.leave() }
                for _ in 0..<300 {
                    let score = try? driver.rows(for: [id]).first?.values[slot]
                    guard case .double(let value)? = score, value == value.rounded() else {
                        failures.withLock { $0 += 1 }
                        continue
                    }
                }
            }.start()
        }
        for round in 21...60 { try setScore(Double(round)) }
        done.wait()
        #expect(failures.withLock { $0 } == 0)
        #expect(try driver.rows(for: [id]).first?.values[slot] == .double(60))
    }
}
