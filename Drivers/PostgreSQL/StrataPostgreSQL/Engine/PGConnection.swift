import CLibPQ
import Foundation
import Strata

/// One libpq connection, with the statements it has prepared.
///
/// `@unchecked Sendable`: a connection is used by one thread at a time. The pool
/// (``ConnectionPool``) hands each connection to one caller until it is given back, and the
/// notification listener owns its connection alone; nothing else holds one.
final class PGConnection: @unchecked Sendable {
    let handle: OpaquePointer
    /// SQL text → name of the statement prepared for it on this connection.
    private var prepared: [String: String] = [:]
    /// ``PreparedSQL`` number → name of the statement prepared for it on this connection.
    private var preparedByNumber: [Int: String] = [:]
    private var isClosed = false
    /// Where the statements this connection runs are logged (``StoreLog``): each statement at
    /// level 1, with its bound values at 2, with how long it ran at 3. Off: nothing is logged and
    /// nothing is done for it.
    let log: StoreLog

    /// Connects with libpq keyword/value parameters (`host`, `port`, `dbname`, `user`, …). A
    /// password not given here comes from `PGPASSWORD` or the password file, as libpq does.
    ///
    /// - Throws: ``PostgreSQLError`` with `connectionLost` when the server cannot be reached or
    ///   refuses the login.
    init(parameters: [(String, String)], log: StoreLog = .off) throws {
        self.log = log
        let keywords = parameters.map { strdup($0.0) } + [nil]
        let values = parameters.map { strdup($0.1) } + [nil]
        defer {
            for pointer in keywords { free(pointer) }
            for pointer in values { free(pointer) }
        }
        let connection = keywords.withUnsafeBufferPointer { keys in
            values.withUnsafeBufferPointer { vals in
                keys.withMemoryRebound(to: UnsafePointer<CChar>?.self) { keys in
                    vals.withMemoryRebound(to: UnsafePointer<CChar>?.self) { vals in
                        PQconnectdbParams(keys.baseAddress, vals.baseAddress, 0)
                    }
                }
            }
        }
        guard let connection else {
            throw PostgreSQLError(message: "libpq could not allocate a connection", connectionLost: true)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgreSQLError(message: message, connectionLost: true)
        }
        strata_pq_silence(connection)
        handle = connection
    }

    deinit { close() }

    /// Whether libpq considers the connection broken (the server went away).
    var isBroken: Bool { isClosed || PQstatus(handle) != CONNECTION_OK }

    /// Whether no transaction is open (a connection given back in a transaction is not reused).
    var isIdle: Bool { !isClosed && PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// The server's process ID for this connection (it signs the notifications it sends).
    var backendPID: Int32 { PQbackendPID(handle) }

    /// The socket, for waiting on notifications.
    var socket: Int32 { PQsocket(handle) }

    /// A server setting (`server_version_num`, `server_encoding`, …) as reported at login.
    func parameterStatus(_ name: String) -> String? {
        PQparameterStatus(handle, name).map { String(cString: $0) }
    }

    /// Closes the connection; later calls do nothing.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        PQfinish(handle)
    }

    /// Runs one statement (not prepared) with `parameters`; rows come in binary format.
    @discardableResult
    func execute(_ sql: String, _ parameters: PGParameters = PGParameters()) throws -> PGResult {
        let result = logged(sql, parameters) {
            parameters.withPointers { count, types, values, lengths, formats in
                PQexecParams(handle, sql, count, types, values, lengths, formats, 1)
            }
        }
        return try checked(result)
    }

    /// Runs a statement through a prepared statement of this connection, preparing it on first
    /// use (the parameters' types fix the statement's).
    @discardableResult
    func executePrepared(_ sql: String, _ parameters: PGParameters) throws -> PGResult {
        let name: String
        if let existing = prepared[sql] {
            name = existing
        } else {
            name = "strata_\(prepared.count + 1)"
            let result = parameters.withPointers { count, types, _, _, _ in PQprepare(handle, name, sql, count, types) }
            _ = try checked(result)
            prepared[sql] = name
        }
        let result = logged(sql, parameters) {
            parameters.withPointers { count, _, values, lengths, formats in
                PQexecPrepared(handle, name, count, values, lengths, formats, 1)
            }
        }
        return try checked(result)
    }

    /// Runs one of the driver's fixed statements, prepared on this connection on first use and found
    /// again by its number.
    @discardableResult
    func executePrepared(_ statement: PreparedSQL, _ parameters: PGParameters) throws -> PGResult {
        let name: String
        if let existing = preparedByNumber[statement.id] {
            name = existing
        } else {
            name = "strata_n\(statement.id)"
            let result = parameters.withPointers { count, types, _, _, _ in
                PQprepare(handle, name, statement.sql, count, types)
            }
            _ = try checked(result)
            preparedByNumber[statement.id] = name
        }
        let result = logged(statement.sql, parameters) {
            parameters.withPointers { count, _, values, lengths, formats in
                PQexecPrepared(handle, name, count, values, lengths, formats, 1)
            }
        }
        return try checked(result)
    }

    /// Runs statements without parameters, several separated by `;` allowed (the driver's own
    /// schema text only; never text holding a value).
    func executeScript(_ sql: String) throws {
        _ = try checked(logged(sql, nil) { PQexec(handle, sql) })
    }

    /// Runs `body`, which sends `sql` with `parameters`, logging it as ``log`` asks: the statement
    /// (with its parameters from level 2) before it runs, its duration from level 3.
    @inline(__always)
    func logged(_ sql: String, _ parameters: PGParameters?, _ body: () -> OpaquePointer?) -> OpaquePointer? {
        guard log.isOn else { return body() }
        return log.logged(
            log.detail >= .values && (parameters?.count ?? 0) > 0 ? "\(sql) -- \(parameters?.loggedValues ?? "")" : sql,
            body)
    }

    func checked(_ result: OpaquePointer?) throws -> PGResult {
        guard let result else { throw lastError() }
        let wrapped = PGResult(result)
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return wrapped
        default:
            let state = PQresultErrorField(result, strata_pq_diag_sqlstate()).map { String(cString: $0) }
            let primary = PQresultErrorField(result, strata_pq_diag_message_primary()).map { String(cString: $0) }
            let detail = PQresultErrorField(result, strata_pq_diag_message_detail()).map { String(cString: $0) }
            let message = primary ?? String(cString: PQresultErrorMessage(result))
            // Class 08 (connection exception) and 57P01–57P03 (the server is shutting down or
            // restarting) end the session, as does any error after which libpq sees a broken link.
            let lost =
                isBroken || state?.hasPrefix("08") == true || state == "57P01" || state == "57P02" || state == "57P03"
            throw PostgreSQLError(sqlState: state, message: message, detail: detail, connectionLost: lost)
        }
    }

    func lastError() -> PostgreSQLError {
        PostgreSQLError(message: String(cString: PQerrorMessage(handle)), connectionLost: isBroken)
    }

    // MARK: Notifications

    /// Reads whatever the server sent, without blocking.
    func consumeInput() throws {
        guard PQconsumeInput(handle) == 1 else { throw lastError() }
    }

    /// Takes the notifications received so far: (sending backend, channel, payload).
    func takeNotifications() -> [(pid: Int32, channel: String, payload: String)] {
        var received: [(Int32, String, String)] = []
        while let notification = PQnotifies(handle) {
            let item = notification.pointee
            received.append((item.be_pid, String(cString: item.relname), String(cString: item.extra)))
            PQfreemem(notification)
        }
        return received
    }
}
