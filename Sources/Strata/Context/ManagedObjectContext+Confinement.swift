import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Core Data's concurrency debugging (`-com.apple.CoreData.ConcurrencyDebug 1`): every public entry
// point of a context and of its objects checks that it runs on the context's executor, and stops
// the program with a message naming the context and the call when it does not. A context used from
// two threads at once corrupts its tables silently; the check turns that into a clear stop at the
// first call made from the wrong place.
//
// The rule a call must meet (``ManagedObjectContext/checkConfinement(_:of:)``):
// - inside `perform`/`performAndWait` of the context (its queue), or
// - for a `.mainQueue` context, on the main thread, or
// - for a `.privateQueue` context, on the thread that created it while none of its queued work runs
//   (Core Data's confinement contract, for scripts, tools and tests that use one context from one
//   thread without `perform`).
//
// On in debug builds (STRATA_CHECKS) unless `STRATA_CONCURRENCY_DEBUG=0`, and in release builds when
// `STRATA_CONCURRENCY_DEBUG=1`. Off, each entry point costs one load and branch.

/// Whether contexts check the thread of every call (see the rules above).
enum ConcurrencyDebugging {
    /// Read once from the environment.
    static let isEnabled: Bool = {
        let setting = ProcessInfo.processInfo.environment["STRATA_CONCURRENCY_DEBUG"]
        #if STRATA_CHECKS
            return setting != "0"
        #else
            return setting == "1"
        #endif
    }()
}

/// A thread's identity, for the confinement check.
struct ThreadIdentity: Equatable {
    let thread: pthread_t

    static var current: ThreadIdentity { ThreadIdentity(thread: pthread_self()) }

    static func == (a: ThreadIdentity, b: ThreadIdentity) -> Bool { pthread_equal(a.thread, b.thread) != 0 }
}

extension ManagedObject {
    /// Stops the program when concurrency debugging is on and `call` on this object is made
    /// outside its context's executor. Off, it does not touch the context (no retain).
    @inline(__always) func checkConfinement(_ call: @autoclosure () -> String) {
        if ConcurrencyDebugging.isEnabled { context?.verifyExecutor(call, self) }
    }
}

extension ManagedObjectContext {
    /// Stops the program when concurrency debugging is on and `call` (on `object`, when given)
    /// is made outside this context's executor.
    @inline(__always) func checkConfinement(_ call: @autoclosure () -> String, of object: ManagedObject? = nil) {
        if ConcurrencyDebugging.isEnabled { verifyExecutor(call, object) }
    }

    /// Whether the calling thread may use this context now.
    var isOnExecutor: Bool {
        if DispatchQueue.getSpecific(key: queueKey) == ObjectIdentifier(self) { return true }
        switch concurrencyType {
        case .mainQueue:
            return Thread.isMainThread
        case .privateQueue:
            return ThreadIdentity.current == creatingThread && queuedWork.load(ordering: .acquiring) == 0
        }
    }

    func verifyExecutor(_ call: () -> String, _ object: ManagedObject?) {
        guard !isOnExecutor else { return }
        let subject = object.map { "\($0.entity.name) \($0.objectID)." } ?? ""
        let place: String
        switch concurrencyType {
        case .mainQueue: place = "a main-queue context must be used on the main thread or inside perform/performAndWait"
        case .privateQueue:
            place =
                queuedWork.load(ordering: .acquiring) > 0 && ThreadIdentity.current == creatingThread
                ? "work queued with perform is running on it right now; use performAndWait to join it"
                : "a private-queue context must be used inside perform/performAndWait, or only from the thread that created it"
        }
        fatalError(
            "Strata concurrency violation: \(subject)\(call()) on context \(debugName) was called outside the context's executor: \(place). (Checks are on in debug builds and with STRATA_CONCURRENCY_DEBUG=1.)"
        )
    }

    /// The context's name for messages: its ``name`` or its address.
    var debugName: String {
        if let name { return "'\(name)'" }
        return "0x" + String(UInt(bitPattern: ObjectIdentifier(self)), radix: 16)
    }
}
