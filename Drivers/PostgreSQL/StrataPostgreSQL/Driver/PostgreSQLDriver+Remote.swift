import CLibPQ
import Foundation
import Strata

extension PostgreSQLDriver {
    /// Listens on the store's channel (``PostgreSQLLocation/channel``) on a connection of its own
    /// and reports what other processes' saves changed. A save's own notifications carry this
    /// driver's token and are not reported back to it.
    public func observeRemoteChanges(_ handler: @escaping @Sendable (RemoteChanges) -> Void) throws {
        let parameters = location.connectionParameters
        let listening = try mappingErrors("listening for other processes' changes") {
            try NotificationListener(
                channel: location.channel, token: token, connect: { try PGConnection(parameters: parameters) },
                handler: handler)
        }
        let previous = listener.withLock { current -> NotificationListener? in
            defer { current = listening }
            return current
        }
        previous?.stop()
        listening.start()
    }

    /// Sends the notifications of a change set, inside its transaction (invariant G5).
    func notify(_ changes: RemoteChanges, _ connection: PGConnection) throws {
        guard !changes.isEmpty else { return }
        let payloads = RemoteChangePayload.encode(changes, token: token)
        var parameters = PGParameters()
        parameters.append(rawText: location.channel)
        parameters.appendArray(PGType.textArray, elementType: PGType.text, count: payloads.count) { index, bytes in
            bytes.append(contentsOf: payloads[index].utf8)
            return true
        }
        try connection.executePrepared("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", parameters)
    }
}
