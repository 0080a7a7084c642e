import Dispatch
import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

/// Core Data's concurrency debugging: in debug builds (these tests) every public call on a
/// context or its objects checks it runs on the context's executor, and stops the program with a
/// message naming the context and the call when it does not. Each violation runs in a child
/// process (an exit test), since it ends the process.
@Suite("Concurrency debugging")
struct ConcurrencyDebuggingTests {
    @Test("a private-queue context called from another thread outside perform stops the program")
    func otherThread() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let stack = try TestStack(seeded: false)
            let context = stack.context
            context.name = "checked"
            onAnotherThread { _ = context.hasChanges }
        }
        let message = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(
            message.contains("hasChanges on context 'checked'"),
            "the message names the call and the context: \(message)")
        #expect(message.contains("perform"), "and the way out")
    }

    @Test("an object read from another thread outside perform stops the program")
    func objectOnOtherThread() async {
        await #expect(processExitsWith: .failure) {
            let stack = try TestStack(seeded: true)
            let ann = try stack.fetch("Employee", "name == 'Ann'")[0]
            nonisolated(unsafe) let object = ann
            onAnotherThread { _ = object.value(forKey: "name") }
        }
    }

    @Test("the creating thread may not call in while perform's work runs on the queue")
    func creatingThreadDuringPerform() async {
        await #expect(processExitsWith: .failure) {
            let stack = try TestStack(seeded: false)
            let context = stack.context
            let running = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            context.perform {
                running.signal()
                release.wait()
            }
            running.wait()
            _ = context.hasChanges
            release.signal()
        }
    }

    @Test("a main-queue context used off the main thread stops the program")
    func mainQueueOffMain() async {
        await #expect(processExitsWith: .failure) {
            let stack = try TestStack(seeded: false)
            let context = ManagedObjectContext(coordinator: stack.coordinator, concurrencyType: .mainQueue)
            onAnotherThread { _ = context.hasChanges }
        }
    }

    @Test("calls inside perform and performAndWait from any thread, and from the creating thread, pass")
    func allowedCalls() async throws {
        let stack = try TestStack(seeded: true)
        let context = stack.newContext()
        let count = try context.count(for: FetchRequest(entityName: "Employee"))
        let fromOtherThread = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        try context.performAndWait { try context.count(for: FetchRequest(entityName: "Employee")) }
                    })
            }
        }
        #expect(fromOtherThread == count)
        let names = try await context.perform {
            try context.fetch(FetchRequest(entityName: "Employee")).compactMap { $0.value(forKey: "name") as? String }
                .count
        }
        #expect(names == count)
    }
}

/// Runs `body` on a new thread and waits for it (`DispatchQueue.sync` may run on the caller's thread).
func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    Thread {
        body()
        done.signal()
    }.start()
    done.wait()
}
