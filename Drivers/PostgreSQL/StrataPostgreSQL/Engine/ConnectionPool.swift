import CLibPQ
import Dispatch
import Foundation
import Strata

// CONNECTION POOL INVARIANTS
// P1. A connection is used by one caller at a time: it is either in `idle` or leased to exactly
//     one `withConnection` call.
// P2. At most `size` connections exist (a permit of `permits` per lease).
// P3. A connection that is broken, or not idle at the end of a lease (a transaction left open), is
//     closed, never given to another caller.
// States: open -> closed [close()]; closed is final, later leases throw `closed`.

/// A fixed-size pool of connections to one server, replacing connections the server dropped.
///
/// Thread safety: `Sendable`; `idle` sits behind a lock and leases are counted by a semaphore.
final class ConnectionPool: Sendable {
    /// Connections at most.
    let size: Int
    /// How long a caller waits for a free connection, in seconds.
    let waitTimeout: Double
    private let permits: DispatchSemaphore
    private let state = Locked<(idle: [PGConnection], closed: Bool)>(([], false))
    private let connect: @Sendable () throws -> PGConnection
    private let storeName: String

    init(size: Int, waitTimeout: Double, storeName: String, connect: @escaping @Sendable () throws -> PGConnection) {
        self.size = size
        self.waitTimeout = waitTimeout
        self.permits = DispatchSemaphore(value: size)
        self.storeName = storeName
        self.connect = connect
    }

    /// Gives `first` (a connection already opened, e.g. while opening the store) to the pool.
    func add(_ first: PGConnection) {
        state.withLock { $0.idle.append(first) }
    }

    /// Runs `body` with a connection of the pool.
    ///
    /// When the connection turns out to be lost (the server restarted since it was last used)
    /// and `retryingLostConnection` is true, `body` runs once more on a new connection: callers
    /// pass true only for work that has not changed anything when it fails that way (reads, and
    /// transactions whose `COMMIT` was not yet sent, which the server rolled back).
    ///
    /// - Throws: ``StoreError`` `.closed` after ``close()``, `.timedOut` when every connection
    ///   stays busy for ``waitTimeout`` seconds; whatever `body` throws.
    func withConnection<T>(retryingLostConnection: Bool, _ body: (PGConnection) throws -> T) throws -> T {
        guard permits.wait(timeout: .now() + max(waitTimeout, 0.001)) == .success else {
            throw StoreError(
                .timedOut,
                "all \(size) connections of the pool stayed busy for \(waitTimeout) s; raise pool_size or the timeout",
                store: storeName)
        }
        defer { permits.signal() }
        var retried = false
        while true {
            let connection = try take()
            do {
                let result = try body(connection)
                giveBack(connection)
                return result
            } catch let error as PostgreSQLError where error.connectionLost {
                connection.close()
                if retryingLostConnection && !retried {
                    retried = true
                    continue
                }
                throw error
            } catch {
                giveBack(connection)
                throw error
            }
        }
    }

    private func take() throws -> PGConnection {
        let reused = try state.withLock { state -> PGConnection? in
            if state.closed { throw closedError() }
            return state.idle.popLast()
        }
        if let reused, !reused.isBroken { return reused }
        reused?.close()
        return try connect()
    }

    private func giveBack(_ connection: PGConnection) {
        guard !connection.isBroken, connection.isIdle else {
            connection.close()
            return
        }
        let kept = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.idle.append(connection)
            #if STRATA_CHECKS
                checkInvariants(state.idle)
            #endif
            return true
        }
        if !kept { connection.close() }
    }

    /// The server process IDs of the idle connections (which connection serves the next call).
    var idleBackendPIDs: [Int32] { state.withLock { $0.idle.map(\.backendPID) } }

    /// Closes every idle connection now and every leased one when it comes back; idempotent.
    func close() {
        let idle = state.withLock { state -> [PGConnection] in
            state.closed = true
            defer { state.idle.removeAll() }
            return state.idle
        }
        for connection in idle { connection.close() }
    }

    #if STRATA_CHECKS
        /// P1 and P2: no connection idle twice, never more idle than the pool holds.
        private func checkInvariants(_ idle: [PGConnection]) {
            // A broken invariant is a bug in this file, not bad data: stop at once in checked builds.
            precondition(idle.count <= size, "connection pool: \(idle.count) idle connections in a pool of \(size)")
            precondition(
                Set(idle.map(ObjectIdentifier.init)).count == idle.count, "connection pool: a connection is idle twice")
        }
    #endif

    func closedError() -> StoreError {
        StoreError(.closed, "the store was closed; attach it again to use it", store: storeName)
    }
}
