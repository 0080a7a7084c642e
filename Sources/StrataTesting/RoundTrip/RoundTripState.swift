import Foundation
import Strata

/// What a store holds of a ``RoundTripCase``'s graph, object by object, in terms of the graph's
/// object indexes (so states read through different drivers, whose primary keys differ, compare
/// equal when they hold the same graph).
public struct RoundTripState: Sendable, Equatable {
    /// One object: its entity, every stored attribute slot's value and every relationship's targets.
    public struct Object: Sendable, Equatable {
        public var entity: String
        public var attributes: [String: ExactValue]
        public var relationships: [String: Targets]
    }

    /// A relationship's targets as object indexes (`-1` for an object the graph does not know).
    public enum Targets: Sendable, Equatable, CustomStringConvertible {
        case one(Int?)
        case ordered([Int])
        case unordered([Int])

        public var description: String {
            switch self {
            case .one(let target): target.map { "\($0)" } ?? "nil"
            case .ordered(let targets): "\(targets) (ordered)"
            case .unordered(let targets): "\(targets)"
            }
        }
    }

    /// The objects by index; an object that should be there and is not has no entry.
    public var objects: [Int: Object] = [:]
    /// Objects of each entity (exactly that entity) the store holds.
    public var counts: [String: Int] = [:]

    /// Reads the objects `ids` names through a new context of `coordinator`.
    ///
    /// - Throws: The store's error when a read fails (an object that is gone is simply missing).
    public static func read(_ ids: [Int: ManagedObjectID], from coordinator: PersistentStoreCoordinator) throws
        -> RoundTripState
    {
        let context = ManagedObjectContext(coordinator: coordinator)
        var indexes: [ManagedObjectID: Int] = [:]
        for (index, id) in ids { indexes[id] = index }
        var state = RoundTripState()
        for entity in coordinator.managedObjectModel.entities where !entity.isAbstract {
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            state.counts[entity.name] = try context.count(for: request)
        }
        for (index, id) in ids.sorted(by: { $0.key < $1.key }) {
            let object: ManagedObject
            do {
                object = try context.existingObject(with: id)
            } catch let error as StoreError where error.code == .notFound {
                continue
            }
            var read = Object(entity: object.entity.name, attributes: [:], relationships: [:])
            for property in object.entity.properties {
                switch property {
                case .attribute(let attribute):
                    // Transient attributes are never stored; what a fresh context shows is not the store's.
                    guard !attribute.isTransient else { continue }
                    read.attributes[attribute.name] = ExactValue(try object.storeValue(forKey: attribute.name))
                case .relationship(let relationship):
                    let targets = object.objectIDs(forRelationshipNamed: relationship.name).map { indexes[$0] ?? -1 }
                    read.relationships[relationship.name] =
                        !relationship.isToMany
                        ? .one(targets.first)
                        : relationship.isOrdered ? .ordered(targets) : .unordered(targets.sorted())
                }
            }
            state.objects[index] = read
        }
        return state
    }

    /// The attribute values the graph should leave: each live object's values after the edits,
    /// defaults where it set none, transformer output for values set through a transformer.
    ///
    /// - Parameter live: The indexes of the objects still there.
    public static func expectedAttributes(
        of testCase: RoundTripCase, model: ManagedObjectModel, live: Set<Int>
    ) throws -> [Int: [String: ExactValue]] {
        var values = testCase.graph.objects.map(\.values)
        for case .set(let object, let key, let value) in testCase.graph.edits { values[object][key] = value }
        var result: [Int: [String: ExactValue]] = [:]
        for index in live.sorted() {
            guard let entity = model.entity(named: testCase.graph.objects[index].entity) else { continue }
            var expected: [String: ExactValue] = [:]
            for attribute in entity.attributes where !attribute.isTransient {
                switch values[index][attribute.name] {
                case .store(let value)?: expected[attribute.name] = ExactValue(value)
                case .strings(let strings)?:
                    let transformer = attribute.valueTransformerName.flatMap(
                        AttributeValueTransformers.transformer(named:))
                    let data = try transformer?.transformedValue(strings)
                    expected[attribute.name] = ExactValue(data.map(StoreValue.binary) ?? .null)
                case nil: expected[attribute.name] = ExactValue(attribute.defaultValue)
                }
            }
            result[index] = expected
        }
        return result
    }

    /// The differences from `expected`, one line each (at most `limit`), naming the object, its
    /// entity and the property; empty when equal.
    public func differences(from expected: RoundTripState, limit: Int = 12) -> [String] {
        var lines: [String] = []
        for (entity, count) in expected.counts.sorted(by: { $0.key < $1.key }) where counts[entity] != count {
            lines.append(
                "\(RoundTripText.name(entity)): \(counts[entity].map(String.init) ?? "no") objects, expected \(count)")
        }
        for (index, object) in expected.objects.sorted(by: { $0.key < $1.key }) {
            guard let actual = objects[index] else {
                lines.append("object \(index) (\(RoundTripText.name(object.entity))) is missing")
                continue
            }
            lines += Self.attributeDifferences(
                actual.attributes, object.attributes, object: index, entity: object.entity)
            for (key, targets) in object.relationships.sorted(by: { $0.key < $1.key })
            where actual.relationships[key] != targets {
                lines.append(
                    "object \(index) (\(RoundTripText.name(object.entity))).\(RoundTripText.name(key)): \(actual.relationships[key].map { "\($0)" } ?? "absent"), expected \(targets)"
                )
            }
        }
        for index in objects.keys.sorted() where expected.objects[index] == nil {
            lines.append("object \(index) is there, expected it gone")
        }
        return Array(lines.prefix(limit))
    }

    /// Differences between attribute values, one line each.
    public static func attributeDifferences(
        _ actual: [String: ExactValue], _ expected: [String: ExactValue], object: Int, entity: String
    ) -> [String] {
        expected.sorted(by: { $0.key < $1.key }).compactMap { key, value in
            actual[key] == value
                ? nil
                : "object \(object) (\(RoundTripText.name(entity))).\(RoundTripText.name(key)): \(actual[key].map { "\($0)" } ?? "absent"), expected \(value)"
        }
    }
}

/// A stored value compared exactly: strings scalar by scalar (`é` and `e` + U+0301 differ), doubles
/// and dates bit by bit (`-0.0` is not `0.0`; every NaN equals every NaN), decimals by value.
public struct ExactValue: Sendable, Equatable, CustomStringConvertible {
    /// The value.
    public var value: StoreValue

    /// Wraps a value.
    public init(_ value: StoreValue) { self.value = value }

    public static func == (a: ExactValue, b: ExactValue) -> Bool {
        switch (a.value, b.value) {
        case (.string(let x), .string(let y)): return x.unicodeScalars.elementsEqual(y.unicodeScalars)
        case (.double(let x), .double(let y)): return x.isNaN ? y.isNaN : x.bitPattern == y.bitPattern
        case (.date(let x), .date(let y)):
            let (p, q) = (x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
            return p.isNaN ? q.isNaN : p.bitPattern == q.bitPattern
        case (.decimal(let x), .decimal(let y)): return x.isNaN ? y.isNaN : x == y
        case (.uri(let x), .uri(let y)):
            return x.absoluteString.unicodeScalars.elementsEqual(y.absoluteString.unicodeScalars)
        default: return a.value == b.value
        }
    }

    public var description: String { RoundTripText.value(value) }
}
