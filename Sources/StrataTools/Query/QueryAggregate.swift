import Foundation
import Strata

/// One `--aggregate FUNC:KEY` of `strata query`.
public struct QueryAggregate: Sendable, Hashable {
    /// The function.
    public var function: AggregateFunction
    /// The key path; `nil` for `count:*`.
    public var keyPath: String?

    /// The key of its value in each output row: `count(*)`, `sum(age)`, `avg(department.budget)`.
    public var outputKey: String { "\(function.shortName)(\(keyPath ?? "*"))" }

    /// The name `--having` reads it by, as `$name`: `count`, `sum_age`, `avg_department_budget`.
    public var alias: String {
        keyPath.map { "\(function.shortName)_" + $0.replacingOccurrences(of: ".", with: "_") } ?? function.shortName
    }

    /// Parses `count:*`, `sum:age`, `avg:department.budget` (also `average:`).
    ///
    /// - Throws: ``ToolError`` (usage) naming the text and what was expected.
    public init(parsing text: String) throws {
        let parts = text.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        let names = ["count", "sum", "avg", "average", "min", "max"]
        guard parts.count == 2, !parts[1].isEmpty else {
            throw ToolError.usage(
                "--aggregate '\(text)': write FUNC:KEY, e.g. count:* or sum:age (FUNC is \(names.joined(separator: ", ")))"
            )
        }
        let name = parts[0].lowercased()
        guard let function = name == "avg" ? .average : AggregateFunction(rawValue: name) else {
            throw ToolError.usage(
                "--aggregate '\(text)': unknown function '\(parts[0])'; use one of \(names.joined(separator: ", "))")
        }
        if parts[1] == "*" {
            guard function == .count else {
                throw ToolError.usage("--aggregate '\(text)': only count takes '*'; name a key path, e.g. \(name):age")
            }
            keyPath = nil
        } else {
            keyPath = parts[1]
        }
        self.function = function
    }
}
