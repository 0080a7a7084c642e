import Foundation
import Strata

/// How the conformance suite opens stores of one driver. Each driver's test target makes one and
/// runs every ``ConformanceCase`` with it.
public struct DriverHarness: Sendable, CustomStringConvertible {
    /// A short name for test output ("in-memory", "sqlite", …).
    public var name: String
    /// The store type.
    public var storeType: StoreType
    /// Where a store of this driver lives inside a temporary directory (`nil` for no file). The
    /// same directory gives the same location, so a store can be reopened.
    public var location: @Sendable (URL) -> URL?
    /// Options used when opening stores.
    public var options: StoreOptions

    /// Creates a harness.
    public init(
        name: String, storeType: StoreType, options: StoreOptions = StoreOptions(),
        location: @escaping @Sendable (URL) -> URL?
    ) {
        self.name = name
        self.storeType = storeType
        self.options = options
        self.location = location
    }

    public var description: String { name }

    /// Opens a coordinator with one store of this driver at the location for `directory`.
    public func openStack(
        in directory: TemporaryDirectory, model: ManagedObjectModel = ConformanceModel.model
    ) throws -> (PersistentStoreCoordinator, PersistentStore) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: storeType, at: location(directory.url), options: options)
        return (coordinator, store)
    }
}

/// A failed conformance check, with what was expected and what happened.
public struct ConformanceFailure: Error, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// Where the check is.
    public var file: String
    /// The line of the check.
    public var line: Int

    public var description: String { "\(file):\(line): \(message)" }
}

/// Throws a ``ConformanceFailure`` unless `condition` holds.
public func require(
    _ condition: @autoclosure () throws -> Bool, _ message: @autoclosure () -> String,
    file: String = #fileID, line: Int = #line
) throws {
    guard try condition() else { throw ConformanceFailure(message: message(), file: file, line: line) }
}

/// Throws a ``ConformanceFailure`` unless `a == b`.
public func requireEqual<T: Equatable>(
    _ a: T, _ b: T, _ what: @autoclosure () -> String, file: String = #fileID, line: Int = #line
) throws {
    guard a == b else {
        throw ConformanceFailure(message: "\(what()): expected \(b), got \(a)", file: file, line: line)
    }
}

/// Returns `value`, or throws a ``ConformanceFailure`` naming `what` when it is `nil`.
public func requireValue<T>(
    _ value: T?, _ what: @autoclosure () -> String, file: String = #fileID, line: Int = #line
) throws -> T {
    guard let value else { throw ConformanceFailure(message: "\(what()): missing", file: file, line: line) }
    return value
}

/// Runs `body` and requires it to throw an error for which `matches` holds.
public func requireThrows(
    _ what: @autoclosure () -> String, file: String = #fileID, line: Int = #line,
    matches: (any Error) -> Bool = { _ in true }, _ body: () throws -> Void
) throws {
    do {
        try body()
    } catch {
        guard matches(error) else {
            throw ConformanceFailure(message: "\(what()): threw an unexpected error: \(error)", file: file, line: line)
        }
        return
    }
    throw ConformanceFailure(message: "\(what()): expected an error, none was thrown", file: file, line: line)
}
