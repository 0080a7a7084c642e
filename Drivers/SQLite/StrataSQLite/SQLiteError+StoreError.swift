import CSQLite
import Foundation
import Strata

extension SQLiteError {
    /// This failure as the ``StoreError`` the core and users see: a code by SQLite's result code,
    /// a message naming the store file and the next step, and `self` kept as `underlying`.
    ///
    /// - Parameters:
    ///   - store: The store file's path.
    ///   - action: What the driver was doing ("saving", "opening", …).
    ///   - timeout: The busy timeout in seconds, named in lock messages.
    func storeError(store: String, action: String, timeout: Double = 0) -> StoreError {
        let primary = resultCode.map { $0 & 0xFF }
        let (code, message): (StoreError.Code, String)
        switch primary {
        case SQLITE_BUSY, SQLITE_LOCKED:
            (code, message) = (
                .locked,
                "\(action) failed: the store stayed locked by another connection for longer than its \(timeout)s timeout; close the other writer or raise StoreOptions.timeout"
            )
        case SQLITE_FULL:
            (code, message) = (
                .full,
                "\(action) failed: the disk or the store's size limit (max_page_count) is full; free space or raise the limit, then save again"
            )
        case SQLITE_READONLY where resultCode == Self.readOnlyRollback:
            (code, message) = (
                .readOnly,
                "\(action) failed: a transaction interrupted by a crash must be rolled back (the -journal beside the file) before the store can be read, and this connection may not write; open the store once without StoreOptions(isReadOnly: true), from a process that can write its folder"
            )
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH:
            (code, message) = (
                .readOnly,
                "\(action) failed: the store file or its folder cannot be written; move it somewhere writable or open it with StoreOptions(isReadOnly: true)"
            )
        case SQLITE_CORRUPT:
            (code, message) = (
                .corrupt,
                "\(action) failed: the file is damaged or truncated (SQLite: \(self.message)); restore it from a backup"
            )
        case SQLITE_NOTADB:
            (code, message) = (
                .corrupt,
                "\(action) failed: the file is not a SQLite database; check the path, or open it with the store type that wrote it"
            )
        case SQLITE_CANTOPEN:
            (code, message) = (
                .io,
                "\(action) failed: the file cannot be opened or created; check that its folder exists and is writable"
            )
        case SQLITE_CONSTRAINT:
            (code, message) = (
                .constraint,
                "\(action) failed: a row breaks a uniqueness constraint of the store (\(self.message)); change the conflicting values and save again"
            )
        case SQLITE_IOERR, SQLITE_NOMEM:
            (code, message) = (.io, "\(action) failed: \(self.message); check the disk and try again")
        default:
            switch self.code {
            case .corrupt:
                (code, message) = (.corrupt, "\(action) failed: \(self.message); restore the store from a backup")
            case .notFound: (code, message) = (.notFound, "\(action) failed: \(self.message)")
            case .unsupported: (code, message) = (.unsupported, "\(action) failed: \(self.message)")
            case .cannotOpen:
                (code, message) = (.io, "\(action) failed: \(self.message); check the path and permissions")
            default: (code, message) = (.io, "\(action) failed: \(self.message)")
            }
        }
        return StoreError(code, message, store: file ?? store, underlying: self)
    }

    /// `SQLITE_READONLY_ROLLBACK`: a hot rollback journal a read-only connection cannot roll back.
    static let readOnlyRollback: Int32 = 776

    /// Whether this is a read-only connection meeting a hot journal (`SQLITE_READONLY_ROLLBACK`).
    var isHotJournalOnReadOnlyConnection: Bool { resultCode == Self.readOnlyRollback }
}

/// Runs `body`, turning a ``SQLiteError`` into a ``StoreError``. `action` is built only for an
/// error (a fault or a lookup is a read each, and its words cost more than a short read).
@inline(__always)
func mappingErrors<T>(
    store: String, action: @autoclosure () -> String, timeout: Double = 0, _ body: () throws -> T
) throws -> T {
    do {
        return try body()
    } catch let error as SQLiteError {
        throw error.storeError(store: store, action: action(), timeout: timeout)
    }
}
