import CSQLite
import Foundation
import Strata

/// The log a traced connection's callbacks write to.
final class SQLiteTraceSink {
    let log: StoreLog
    init(_ log: StoreLog) { self.log = log }
}

extension SQLiteConnection {
    /// Logs every statement this connection runs to `log`, through SQLite's own tracing
    /// (`sqlite3_trace_v2`): the statement's text, with its bound values filled in
    /// (`sqlite3_expanded_sql`) and how long it ran as `log`'s detail asks. Nothing is registered
    /// when `log` is off, so an untraced connection pays nothing.
    public func trace(to log: StoreLog) {
        guard log.isOn, let handle else { return }
        let sink = SQLiteTraceSink(log)
        traceSink = sink
        var mask = UInt32(SQLITE_TRACE_STMT)
        if log.detail >= .timings { mask |= UInt32(SQLITE_TRACE_PROFILE) }
        // The context is the sink, unretained: the connection holds it for as long as it is open,
        // and SQLite calls back only while it is.
        sqlite3_trace_v2(
            handle, mask,
            { kind, context, statement, extra in
                guard let context, let statement else { return 0 }
                let sink = Unmanaged<SQLiteTraceSink>.fromOpaque(context).takeUnretainedValue()
                let prepared = OpaquePointer(statement)
                switch Int32(kind) {
                case SQLITE_TRACE_STMT:
                    if sink.log.detail >= .values, let expanded = sqlite3_expanded_sql(prepared) {
                        defer { sqlite3_free(expanded) }
                        sink.log.statement(String(cString: expanded))
                    } else if let text = extra?.assumingMemoryBound(to: CChar.self) {
                        sink.log.statement(String(cString: text))
                    }
                case SQLITE_TRACE_PROFILE:
                    let nanoseconds = extra?.load(as: Int64.self) ?? 0
                    let text = sqlite3_sql(prepared).map { String(cString: $0) } ?? "a statement"
                    sink.log.timing(text, seconds: Double(nanoseconds) / 1e9)
                default: break
                }
                return 0
            }, Unmanaged.passUnretained(sink).toOpaque())
    }
}
