import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

/// What a completion block saw, handed back to the test thread.
private final class Outcome: @unchecked Sendable {
    // @unchecked Sendable: every field is behind `lock`.
    private let lock = NSLock()
    private var _names: [String]?
    private var _error: (any Error)?
    private var _result: AsynchronousFetchResult?
    let done = DispatchSemaphore(value: 0)

    func record(_ result: AsynchronousFetchResult) {
        // Called on the context's queue, where the objects may be read.
        let names = result.finalResult.map { $0.map { $0.value(forKey: "name") as? String ?? "?" } }
        lock.withLock {
            _names = names
            _error = result.operationError
        }
        done.signal()
    }

    var names: [String]? { lock.withLock { _names } }
    var error: (any Error)? { lock.withLock { _error } }
    var result: AsynchronousFetchResult? {
        get { lock.withLock { _result } }
        set { lock.withLock { _result = newValue } }
    }
}

/// A stack of 25 tags (`t00`…`t24`) whose rows are not in the row cache, so each batch reads the store.
private func tagStack() throws -> (TestStack, RecordingDriver, FetchRequest) {
    let (stack, driver) = try TestStack.recording(seeded: false)
    for i in 0..<25 {
        let tag = try stack.context.insertNewObject(forEntityName: "Tag")
        tag["name"] = String(format: "t%02d", i)
    }
    try stack.context.save()
    stack.coordinator.rowCache.removeAll(in: ObjectIdentifier(stack.store))
    driver.clearCalls()
    var request = FetchRequest(entityName: "Tag", sortKeys: [SortKey("name")])
    request.fetchBatchSize = 10
    return (stack, driver, request)
}

private let injected = StoreError(.io, "injected engine failure")

@Suite("Asynchronous fetches")
struct AsynchronousFetchTests {
    @Test("an asynchronous fetch loads every object batch by batch, counts progress and calls its completion block")
    func completes() throws {
        let (stack, driver, request) = try tagStack()
        let context = stack.newContext()
        let outcome = Outcome()
        let result = try context.execute(AsynchronousFetchRequest(fetchRequest: request) { outcome.record($0) })
        outcome.done.wait()
        #expect(outcome.names == (0..<25).map { String(format: "t%02d", $0) })
        #expect(outcome.error == nil)
        #expect(result.progress.totalUnitCount == 25 && result.progress.completedUnitCount == 25)
        #expect(result.isFinished)
        #expect(driver.calls(.rows).count == 3, "three batches of at most 10: \(driver.calls)")
    }

    @Test("cancelling stops the fetch before its next batch; the completion block reports the cancellation")
    func cancellation() throws {
        let (stack, driver, request) = try tagStack()
        let context = stack.newContext()
        let outcome = Outcome()
        // Cancel as soon as the first batch's rows are read.
        driver.afterNext(.rows) { outcome.result?.cancel() }
        let gate = DispatchSemaphore(value: 0)
        context.perform { gate.wait() }  // holds the queue until the result is known to the hook
        outcome.result = try context.execute(AsynchronousFetchRequest(fetchRequest: request) { outcome.record($0) })
        gate.signal()
        outcome.done.wait()
        #expect(outcome.error is CancellationError)
        #expect(outcome.names == nil, "no final result after a cancellation")
        let progress = try #require(outcome.result?.progress)
        #expect(progress.completedUnitCount == 10 && progress.totalUnitCount == 25 && progress.isCancelled)
        #expect(driver.calls(.rows).count == 1, "no batch is read after the cancellation")
    }

    @Test("a store error surfaces as the result's operationError and in the completion block")
    func storeError() throws {
        let (stack, driver, request) = try tagStack()
        let context = stack.newContext()
        let outcome = Outcome()
        driver.failNext(.fetch, with: injected)
        let result = try context.execute(AsynchronousFetchRequest(fetchRequest: request) { outcome.record($0) })
        outcome.done.wait()
        #expect((outcome.error as? StoreError)?.code == .io)
        #expect(result.finalResult == nil && (result.operationError as? StoreError)?.message == injected.message)
        #expect(throws: StoreError.self) {
            _ = try context.execute(AsynchronousFetchRequest(fetchRequest: FetchRequest(entityName: "Nope")))
        }
    }

    @Test("fetchBatches delivers the objects in batches of fetchBatchSize as an AsyncSequence")
    func batches() async throws {
        let (stack, driver, request) = try tagStack()
        let context = ManagedObjectContext(coordinator: stack.coordinator)
        var sizes: [Int] = []
        var names: [String] = []
        for try await batch in context.fetchBatches(request) {
            sizes.append(batch.count)
            names += context.performAndWait { batch.map { $0.value(forKey: "name") as? String ?? "?" } }
        }
        #expect(sizes == [10, 10, 5])
        #expect(names == (0..<25).map { String(format: "t%02d", $0) })
        #expect(driver.calls(.rows).count == 3)
    }

    @Test("leaving a fetchBatches walk early reads no further batch")
    func stopsEarly() async throws {
        let (stack, driver, request) = try tagStack()
        let context = ManagedObjectContext(coordinator: stack.coordinator)
        var seen = 0
        for try await _ in context.fetchBatches(request) {
            seen += 1
            if seen == 2 { break }
        }
        #expect(driver.calls(.rows).count == 2)
    }

    @Test("a store error in a later batch is thrown by the walk after the earlier batches")
    func laterBatchFails() async throws {
        let (stack, driver, request) = try tagStack()
        let context = ManagedObjectContext(coordinator: stack.coordinator)
        driver.afterNext(.rows) { driver.failNext(.rows, with: injected) }
        var delivered = 0
        await #expect(throws: StoreError.self) {
            for try await batch in context.fetchBatches(request) { delivered += batch.count }
        }
        #expect(delivered == 10)
    }
}
