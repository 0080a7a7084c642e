import Dispatch
import Foundation
import Strata

/// The driver's read connections: one per read running at once, up to ``limit``, each used by one
/// thread at a time (invariant S1).
///
/// A read takes an idle connection, or opens one while fewer than ``limit`` are open, and gives it
/// back when done; with every connection busy it waits for one. In WAL mode SQLite lets each
/// connection read its own snapshot while others read and one writes, so readers on different
/// threads (contexts fetching in parallel) do not wait for each other, as they did behind one
/// shared connection. Connections open lazily: a store read from one thread keeps one.
///
/// `@unchecked Sendable`: `state` (the idle list, the count of open connections and the closed
/// flag) is read and changed only inside `lock.withLock`; a connection is owned by exactly one
/// party at a time (the idle list, or the one read that took it), and the semaphore admits at
/// most ``limit`` reads, so never more connections than that exist.
final class ReaderPool: @unchecked Sendable {
    private struct State {
        var idle: [SQLiteConnection]
        var open: Int
        var closed = false
    }

    /// The most read connections open at once.
    let limit: Int
    private let lock = Locked<Void>(())
    private var state: State
    private let admission: DispatchSemaphore
    private let open: @Sendable () throws -> SQLiteConnection

    /// A pool holding `first` (already open), which opens more with `open` as reads need them.
    init(first: SQLiteConnection, limit: Int, open: @escaping @Sendable () throws -> SQLiteConnection) {
        self.limit = max(1, limit)
        self.state = State(idle: [first], open: 1)
        self.admission = DispatchSemaphore(value: max(1, limit))
        self.open = open
    }

    /// Runs `body` with a read connection of its own; `nil` once the pool is closed.
    ///
    /// - Throws: What opening a new connection or `body` throws.
    func withConnection<T>(_ body: (SQLiteConnection?) throws -> T) throws -> T {
        admission.wait()
        defer { admission.signal() }
        let taken: SQLiteConnection?? = lock.withLock { _ in
            if state.closed { return .some(nil) }
            if let connection = state.idle.popLast() { return .some(connection) }
            state.open += 1
            return .none
        }
        let connection: SQLiteConnection
        switch taken {
        case .some(.none): return try body(nil)
        case .some(.some(let idle)): connection = idle
        case .none:
            do {
                connection = try open()
            } catch {
                lock.withLock { _ in state.open -= 1 }
                throw error
            }
        }
        defer { giveBack(connection) }
        return try body(connection)
    }

    private func giveBack(_ connection: SQLiteConnection) {
        let keep = lock.withLock { _ in
            if state.closed {
                state.open -= 1
                return false
            }
            state.idle.append(connection)
            return true
        }
        if !keep { connection.close() }
    }

    /// Closes every connection: idle ones now, busy ones as their reads end (this waits for them);
    /// later reads get `nil`. Idempotent.
    func close() {
        // Take every admission: no read is then running, and none starts until the pool is marked
        // closed and the admissions are given back.
        for _ in 0..<limit { admission.wait() }
        let idle = lock.withLock { _ -> [SQLiteConnection] in
            state.closed = true
            let idle = state.idle
            state.idle = []
            state.open -= idle.count
            return idle
        }
        for connection in idle { connection.close() }
        for _ in 0..<limit { admission.signal() }
    }
}
