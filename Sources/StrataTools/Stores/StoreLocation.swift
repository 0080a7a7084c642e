import Foundation
import Strata

/// Where a store lives and which driver reads it, as the command line writes it:
/// `sqlite:PATH`, `xml:PATH`, `lmdb:PATH`, `memory:` / `memory:NAME`,
/// `postgres://user@host:port/database?schema=NAME` (or `postgresql://`), or a bare path whose
/// extension picks the driver (`.sqlite .sqlite3 .db .storedata` → SQLite, `.xml` → XML, a
/// directory or `.lmdb` → LMDB).
///
/// Bare paths to existing files are also checked by content (SQLite's header, XML's `<`), so a
/// wrong guess is a clear error instead of a driver's "corrupt file".
public struct StoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// A location scheme: one per driver.
    public enum Scheme: String, Sendable, Hashable, CaseIterable {
        case sqlite, xml, lmdb, memory, postgres

        /// The name of the driver's ``StoreType``.
        public var driverName: String {
            switch self {
            case .sqlite: "SQLite"
            case .xml: "XML"
            case .lmdb: "LMDB"
            case .memory: "InMemory"
            case .postgres: "PostgreSQL"
            }
        }

        /// The scheme whose driver is named `name` (case-insensitive).
        public init?(driverName name: String) {
            guard let match = Self.allCases.first(where: { $0.driverName.lowercased() == name.lowercased() }) else {
                return nil
            }
            self = match
        }
    }

    /// The driver scheme.
    public var scheme: Scheme
    /// The store's file (or directory) URL; for `memory:NAME`, a `memory:NAME` URL; `nil` for
    /// `memory:`; for a server's store, its `postgres://` URL (credentials included, never printed).
    public var url: URL?

    /// Creates a location.
    public init(scheme: Scheme, url: URL?) {
        self.scheme = scheme
        self.url = url
    }

    /// Parses a location as the command line writes it.
    ///
    /// - Throws: ``ToolError`` (usage) for an unknown scheme, an empty path, or a bare path whose
    ///   extension or content names no driver.
    public init(parsing text: String) throws {
        if text == "memory:" {
            self.init(scheme: .memory, url: nil)
            return
        }
        let lowered = text.lowercased()
        if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") {
            guard let url = URL(string: text), url.host != nil || url.path.count > 1 || url.query != nil else {
                throw ToolError.usage(
                    "'\(URL(string: text)?.storeName ?? "the store URL")' is not a store URL; write postgres://user@host:5432/database?schema=NAME"
                )
            }
            self.init(scheme: .postgres, url: url)
            return
        }
        if let colon = text.firstIndex(of: ":") {
            let prefix = String(text[..<colon])
            if prefix.lowercased() == "postgres" || prefix.lowercased() == "postgresql" {
                throw ToolError.usage(
                    "a PostgreSQL store is a URL: write postgres://user@host:5432/database?schema=NAME")
            }
            let rest = String(text[text.index(after: colon)...])
            if let scheme = Scheme(rawValue: prefix.lowercased()) {
                if scheme == .memory {
                    self.init(scheme: .memory, url: URL(string: "memory:\(rest)") ?? URL(string: "memory:store"))
                    return
                }
                guard !rest.isEmpty else { throw ToolError.usage("'\(text)' names no file; write \(prefix):PATH") }
                self.init(scheme: scheme, url: URL(fileURLWithPath: rest).standardizedFileURL)
                return
            }
            let looksLikeScheme = !prefix.isEmpty && prefix.allSatisfy { $0.isLetter || $0.isNumber }
            if looksLikeScheme && !FileManager.default.fileExists(atPath: text) {
                throw ToolError.usage(
                    "unknown store type '\(prefix)' in '\(text)'; write sqlite:PATH, xml:PATH, lmdb:PATH, memory: or postgres://…"
                )
            }
        }
        guard !text.isEmpty else { throw ToolError.usage("the store location is empty") }
        let url = URL(fileURLWithPath: text).standardizedFileURL
        self.init(scheme: try Self.guessScheme(for: url, written: text), url: url)
    }

    private static func guessScheme(for url: URL, written text: String) throws -> Scheme {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
        let byExtension: Scheme?
        switch url.pathExtension.lowercased() {
        case "sqlite", "sqlite3", "db", "storedata": byExtension = .sqlite
        case "xml": byExtension = .xml
        case "lmdb": byExtension = .lmdb
        default: byExtension = exists && isDirectory.boolValue ? .lmdb : nil
        }
        let byContent = exists && !isDirectory.boolValue ? sniff(url) : (exists ? .lmdb : nil)
        switch (byExtension, byContent) {
        case (let guess?, let actual?) where guess != actual:
            throw ToolError.usage(
                "'\(text)' is named like a\(guess == .xml ? "n" : "") \(guess.driverName) store but holds \(actual.driverName) data; write \(actual.rawValue):\(text) if that is what it is"
            )
        case (let guess?, _): return guess
        case (nil, let actual?): return actual
        case (nil, nil):
            if exists {
                throw ToolError.usage(
                    "cannot tell which driver reads '\(text)'; write sqlite:\(text), xml:\(text) or lmdb:\(text)")
            }
            throw ToolError.usage(
                "cannot tell the store type of '\(text)' from its extension (.sqlite, .xml, .lmdb); write sqlite:\(text), xml:\(text) or lmdb:\(text)"
            )
        }
    }

    /// The driver whose format the file's first bytes show, or `nil` when they show none.
    private static func sniff(_ url: URL) -> Scheme? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 16), !head.isEmpty else { return nil }
        if head.starts(with: Array("SQLite format 3".utf8)) { return .sqlite }
        let trimmed = head.drop {
            $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF
        }
        if trimmed.first == UInt8(ascii: "<") { return .xml }
        return nil
    }

    /// The store type that opens this location.
    ///
    /// - Throws: ``ToolError`` (usage) when the driver is not part of this build.
    public func storeType() throws -> StoreType {
        KnownDrivers.registerAll()
        if let type = StoreType.named(scheme.driverName) { return type }
        let available = KnownDrivers.all.map(\.name).joined(separator: ", ")
        throw ToolError.usage(
            "the \(scheme.driverName) driver is not available in this build of strata (needed for '\(self)'); available: \(available)"
        )
    }

    /// Whether something exists at the location (always `false` for `memory:`; for `memory:NAME`,
    /// whether that store was opened earlier in this process; for a server's store, whether its
    /// schema holds a store, `false` also when the server cannot be reached: opening it says why).
    public var exists: Bool {
        guard let url else { return false }
        if scheme == .memory || scheme == .postgres {
            // A server that cannot be reached counts as "nothing there"; opening the store then
            // reports the connection error itself.
            return
                (try? storeType().factory.metadata(
                    at: url, options: StoreOptions(isReadOnly: true, createIfMissing: false))) != nil
        }
        return FileManager.default.fileExists(atPath: url.path)
    }

    /// Whether the store lives in a file or directory (every scheme but `memory:` and server stores).
    public var isFileBacked: Bool { scheme != .memory && scheme != .postgres }

    /// Whether the store lives on a database server (`postgres://`).
    public var isOnServer: Bool { scheme == .postgres }

    /// A path (or URL, without its password) for messages.
    public var displayName: String {
        guard let url else { return "memory:" }
        switch scheme {
        case .memory: return url.absoluteString
        case .postgres: return url.storeName
        default: return url.path
        }
    }

    public var description: String {
        guard let url else { return "memory:" }
        switch scheme {
        case .memory: return url.absoluteString
        case .postgres: return url.storeName
        default: return "\(scheme.rawValue):\(url.path)"
        }
    }
}
