import CLibPQ
import Foundation
import Strata
import Synchronization

/// Listens on a store's channel on a connection and thread of its own, and reports other
/// processes' saves (``RemoteChangePayload``) to a handler.
///
/// When the connection drops (the server restarted), it reconnects with a growing pause (0.1 s up
/// to 2 s) and then reports ``RemoteChanges/mayHaveMissedChanges``: notifications sent while it was
/// away are lost, so the coordinator forgets every cached row of the store.
///
/// `@unchecked Sendable`: `connection` is used by `init` and then only by the listener's thread;
/// `stopping` is atomic and the wake-up pipe is written by `stop()` and read by that thread, which
/// is what pipes are for.
final class NotificationListener: @unchecked Sendable {
    private let connect: @Sendable () throws -> PGConnection
    private let channel: String
    private let token: String
    private let handler: @Sendable (RemoteChanges) -> Void
    private var connection: PGConnection?
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let thread = Locked<pthread_t?>(nil)

    /// Connects and starts listening, so no save committed after this returns goes unreported.
    ///
    /// - Throws: ``PostgreSQLError`` when the connection or `LISTEN` fails; `StoreError` `.io`
    ///   when the wake-up pipe cannot be made.
    init(
        channel: String, token: String, connect: @escaping @Sendable () throws -> PGConnection,
        handler: @escaping @Sendable (RemoteChanges) -> Void
    ) throws {
        self.channel = channel
        self.token = token
        self.connect = connect
        self.handler = handler
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            throw StoreError(.io, "cannot make a pipe for the notification listener (errno \(errno))")
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        do {
            let first = try connect()
            try Self.listen(on: first, channel: channel)
            connection = first
        } catch {
            close(wakeRead)
            close(wakeWrite)
            throw error
        }
    }

    private static func listen(on connection: PGConnection, channel: String) throws {
        try connection.executeScript("LISTEN \(channel.sqlName)")
    }

    /// Starts the listener's thread.
    func start() {
        guard !stopping.load(ordering: .sequentiallyConsistent),
            !started.exchange(true, ordering: .sequentiallyConsistent)
        else { return }
        let worker = Thread { [self] in
            thread.withLock { $0 = pthread_self() }
            run()
        }
        worker.name = "strata.postgresql.listener"
        worker.start()
    }

    /// Stops the thread and closes the connection; waits for the thread unless called from it.
    func stop() {
        guard !stopping.exchange(true, ordering: .sequentiallyConsistent) else { return }
        guard started.load(ordering: .sequentiallyConsistent) else {
            // Never started: nothing runs, so the resources are released here.
            connection?.close()
            connection = nil
            close(wakeRead)
            close(wakeWrite)
            return
        }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // a full pipe already wakes the thread; nothing to handle
        let own = thread.withLock { current in current.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        if !own { finished.wait() }
    }

    private var isStopping: Bool { stopping.load(ordering: .sequentiallyConsistent) }

    private func run() {
        defer {
            connection?.close()
            connection = nil
            close(wakeRead)
            close(wakeWrite)
            finished.signal()
        }
        var missed = false
        var pause = 0.1
        while !isStopping {
            guard let current = connection else {
                do {
                    let fresh = try connect()
                    try Self.listen(on: fresh, channel: channel)
                    connection = fresh
                    pause = 0.1
                    if missed {
                        missed = false
                        handler(RemoteChanges(mayHaveMissedChanges: true))
                    }
                } catch {
                    if waitForWake(seconds: pause) { return }
                    pause = min(pause * 2, 2)
                }
                continue
            }
            var fds = [
                pollfd(fd: current.socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                current.close()
                connection = nil
                missed = true
                continue
            }
            if fds[1].revents != 0 { return }
            do {
                try current.consumeInput()
            } catch {
                current.close()
                connection = nil
                missed = true
                continue
            }
            for notification in current.takeNotifications() where notification.channel == channel {
                if let changes = RemoteChangePayload.decode(notification.payload, ignoring: token), !changes.isEmpty {
                    handler(changes)
                }
            }
            if current.isBroken {
                current.close()
                connection = nil
                missed = true
            }
        }
    }

    /// Sleeps `seconds` unless woken by ``stop()``; `true` when woken.
    private func waitForWake(seconds: Double) -> Bool {
        var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        return poll(&fds, 1, Int32(seconds * 1000)) > 0
    }
}
