import Foundation
import Strata
import Testing

@Suite("Sort keys")
struct SortKeyTests {
    static func rows(_ names: [String?]) -> [[String: StoreValue]] {
        names.map { ["name": $0.map(StoreValue.string) ?? .null] }
    }

    static func names(_ rows: [[String: StoreValue]]) -> [String?] {
        rows.map { if case .string(let s) = $0["name"] { s } else { nil } }
    }

    @Test("nil sorts first ascending and last descending")
    func nilOrder() throws {
        let rows = Self.rows(["b", nil, "a"])
        #expect(Self.names(try SortKey.sort(rows, by: [SortKey("name")])) == [nil, "a", "b"])
        #expect(Self.names(try SortKey.sort(rows, by: [SortKey("name", ascending: false)])) == ["b", "a", nil])
    }

    @Test(
        "string comparisons: default, case-insensitive, Finder-like",
        arguments: [
            (SortComparison.default, ["B", "a", "C", "b"], ["B", "C", "a", "b"]),
            (.caseInsensitive, ["B", "a", "C", "b"], ["a", "B", "b", "C"]),
            (.localizedStandard, ["file10", "File2", "file1", "file02b"], ["file1", "File2", "file02b", "file10"]),
            (.localizedStandard, ["x100", "x20", "x3", "y1"], ["x3", "x20", "x100", "y1"]),
            (.default, ["é", "e", "f"], ["e", "f", "é"]),
            (.caseInsensitive, ["b", "A", "a", "B"], ["A", "a", "b", "B"]),
        ])
    func strings(comparison: SortComparison, input: [String], expected: [String]) throws {
        let sorted = try SortKey.sort(Self.rows(input), by: [SortKey("name", comparison: comparison)])
        #expect(Self.names(sorted) == expected)
    }

    @Test("sorting is stable and later keys break ties")
    func multipleKeys() throws {
        let rows: [[String: StoreValue]] = [
            ["name": .string("b"), "age": .integer(2), "n": .integer(0)],
            ["name": .string("a"), "age": .integer(2), "n": .integer(1)],
            ["name": .string("c"), "age": .integer(1), "n": .integer(2)],
            ["name": .string("a"), "age": .integer(2), "n": .integer(3)],
        ]
        let sorted = try SortKey.sort(rows, by: [SortKey("age", ascending: false), SortKey("name")])
        #expect(sorted.map { $0["n"] } == [.integer(1), .integer(3), .integer(0), .integer(2)])
        #expect(try SortKey.compare(rows[0], rows[1], by: [SortKey("age")]) == .orderedSame)
        #expect(try SortKey.compare(rows[0], rows[1], by: [SortKey("age"), SortKey("name")]) == .orderedDescending)
        #expect(try SortKey.compare(rows[1], rows[3], by: [SortKey("age"), SortKey("name")]) == .orderedSame)
    }

    @Test("numbers sort across types; dates by time")
    func numbersAndDates() throws {
        let values: [StoreValue] = [.double(2.5), .integer(3), .decimal(1), .bool(false), .null]
        let rows = values.map { ["v": $0] }
        let sorted = try SortKey.sort(rows, by: [SortKey("v")]).map { $0["v"]! }
        #expect(sorted == [.null, .bool(false), .decimal(1), .double(2.5), .integer(3)])
        let dates = [Date(timeIntervalSinceReferenceDate: 5), Date(timeIntervalSinceReferenceDate: -5)]
        let dateRows = dates.map { ["d": StoreValue.date($0)] }
        #expect(try SortKey.sort(dateRows, by: [SortKey("d")]).first?["d"] == .date(dates[1]))
    }

    @Test("key paths go through to-one relationships and collection operators")
    func keyPaths() throws {
        let people = PeopleFixture()
        let objects = [people.edsger, people.ada, people.alan]
        let byDepartment = try SortKey.sort(objects, by: [SortKey("department.name"), SortKey("name")])
        #expect(byDepartment.map(\.id.primaryKey) == [4, 1, 2])
        let byFriends = try SortKey.sort(objects, by: [SortKey("friends.@count", ascending: false), SortKey("age")])
        #expect(byFriends.map(\.id.primaryKey) == [1, 2, 4])
    }

    @Test("errors: mismatched kinds, to-many key paths, malformed key paths")
    func errors() throws {
        let mixed: [[String: StoreValue]] = [["v": .integer(1)], ["v": .string("a")]]
        #expect(predicateErrorCode { _ = try SortKey.sort(mixed, by: [SortKey("v")]) } == .typeMismatch)
        let people = PeopleFixture()
        #expect(
            predicateErrorCode { _ = try SortKey.compare(people.ada, people.alan, by: [SortKey("friends.age")]) }
                == .typeMismatch)
        #expect(predicateErrorCode { _ = try SortKey("a..b").value(of: people.ada) } == .invalidArgument)
        #expect(predicateErrorCode { _ = try SortKey("nosuch").value(of: people.ada) } == .unknownKeyPath)
    }

    @Test("a one-key path reads the key directly: to-one gives the destination, to-many and unknown keys throw")
    func oneKeyPaths() throws {
        let people = PeopleFixture()
        #expect(try SortKey("department").value(of: people.ada) == people.engineering.selfValue)
        #expect(try SortKey("department").value(of: people.edsger) == .null)
        #expect(try SortKey("age").value(of: people.alan) == .integer(41))
        #expect(predicateErrorCode { _ = try SortKey("friends").value(of: people.ada) } == .typeMismatch)
        #expect(predicateErrorCode { _ = try SortKey("nosuch").value(of: people.ada) } == .unknownKeyPath)
        // Sorting by a to-one relationship orders by the destination's identity, nil first.
        let sorted = try SortKey.sort([people.alan, people.edsger, people.ada], by: [SortKey("department")])
        #expect(sorted.first?.id.primaryKey == 4)
    }

    @Test(
        "value comparison fast path",
        arguments: [
            (StoreValue.null, StoreValue.integer(1), ComparisonResult.orderedAscending),
            (.integer(1), .null, .orderedDescending), (.null, .null, .orderedSame),
            (.integer(2), .double(2), .orderedSame),
            (.string("a"), .string("b"), .orderedAscending),
            (
                .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000002")!),
                .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000001")!), .orderedDescending
            ),
            (
                .reference(RowID(entity: 1, primaryKey: 2)), .reference(RowID(entity: 1, primaryKey: 10)),
                .orderedAscending
            ),
            (.binary(Data([1, 2])), .binary(Data([1, 3])), .orderedAscending),
        ])
    func fastPath(a: StoreValue, b: StoreValue, expected: ComparisonResult) throws {
        #expect(try SortKey.compare(a, b) == expected)
    }

    @Test("reversed flips the direction; description names the key")
    func reversedAndDescription() {
        let key = SortKey("name", comparison: .caseInsensitive)
        #expect(key.reversed.ascending == false)
        #expect(key.reversed.reversed == key)
        #expect(key.description == "name ascending, caseInsensitive")
    }
}
