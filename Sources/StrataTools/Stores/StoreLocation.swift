import Foundation
import Strata

/// Where a store lives and which driver reads it, as the command line writes it:
/// `sqlite:PATH`, `xml:PATH`, `lmdb:PATH`, `memory:` / `memory:NAME`,
/// `postgres://user@host:port/database?schema=NAME` (or `postgresql://`), or a bare path whose
/// extension picks the driver (`.sqlite .sqlite3 .db .storedata` → SQLite, `.xml` → XML, a
/// directory or `.lmdb` → LMDB). Schemes, extensions and signatures come from the driver table,
/// ``KnownDriver/allCases``.
///
/// Bare paths to existing files are also checked by content (SQLite's header, XML's `<`), so a
/// wrong guess is a clear error instead of a driver's "corrupt file".
public struct StoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// The driver that reads the store (its ``KnownDriver/rawValue`` is the location's scheme).
    public var scheme: KnownDriver
    /// The store's file (or directory) URL; for `memory:NAME`, a `memory:NAME` URL; `nil` for
    /// `memory:`; for a server's store, its `postgres://` URL (credentials included, never printed).
    public var url: URL?

    /// Creates a location.
    public init(scheme: KnownDriver, url: URL?) {
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
        for driver in KnownDriver.allCases {
            guard case .server(let urlSchemes, let example) = driver.storage else { continue }
            if urlSchemes.contains(where: { lowered.hasPrefix($0 + "://") }) {
                guard let url = URL(string: text), url.host != nil || url.path.count > 1 || url.query != nil else {
                    throw ToolError.usage(
                        "'\(URL(string: text)?.storeName ?? "the store URL")' is not a store URL; write \(example)")
                }
                self.init(scheme: driver, url: url)
                return
            }
        }
        if let colon = text.firstIndex(of: ":") {
            let prefix = String(text[..<colon])
            for driver in KnownDriver.allCases {
                if case .server(let urlSchemes, let example) = driver.storage, urlSchemes.contains(prefix.lowercased())
                {
                    throw ToolError.usage("a \(driver.title) store is a URL: write \(example)")
                }
            }
            let rest = String(text[text.index(after: colon)...])
            if let scheme = KnownDriver(rawValue: prefix) {
                if scheme.storage == .memory {
                    self.init(scheme: scheme, url: URL(string: "memory:\(rest)") ?? URL(string: "memory:store"))
                    return
                }
                guard !rest.isEmpty else { throw ToolError.usage("'\(text)' names no file; write \(prefix):PATH") }
                self.init(scheme: scheme, url: URL(fileURLWithPath: rest).standardizedFileURL)
                return
            }
            let looksLikeScheme = !prefix.isEmpty && prefix.allSatisfy { $0.isLetter || $0.isNumber }
            if looksLikeScheme && !FileManager.default.fileExists(atPath: text) {
                let examples = KnownDriver.allCases.map(\.locationExample)
                throw ToolError.usage(
                    "unknown store type '\(prefix)' in '\(text)'; write \(examples.dropLast().joined(separator: ", ")) or \(examples.last ?? "")"
                )
            }
        }
        guard !text.isEmpty else { throw ToolError.usage("the store location is empty") }
        let url = URL(fileURLWithPath: text).standardizedFileURL
        self.init(scheme: try Self.guessScheme(for: url, written: text), url: url)
    }

    private static func guessScheme(for url: URL, written text: String) throws -> KnownDriver {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
        let pathExtension = url.pathExtension.lowercased()
        let fileDrivers = KnownDriver.fileBacked
        let byExtension =
            fileDrivers.first { $0.fileExtensions.contains(pathExtension) }
            ?? (exists && isDirectory.boolValue ? directoryDriver : nil)
        let byContent = exists && !isDirectory.boolValue ? sniff(url) : (exists ? directoryDriver : nil)
        switch (byExtension, byContent) {
        case (let guess?, let actual?) where guess != actual:
            let article = guess.driverName.first.map { "AEIOX".contains($0) } == true ? "an" : "a"
            throw ToolError.usage(
                "'\(text)' is named like \(article) \(guess.driverName) store but holds \(actual.driverName) data; write \(actual.rawValue):\(text) if that is what it is"
            )
        case (let guess?, _): return guess
        case (nil, let actual?): return actual
        case (nil, nil):
            let prefixes = fileDrivers.map { "\($0.rawValue):\(text)" }
            let written = prefixes.dropLast().joined(separator: ", ") + " or " + (prefixes.last ?? "")
            if exists { throw ToolError.usage("cannot tell which driver reads '\(text)'; write \(written)") }
            let extensions = fileDrivers.map { "." + ($0.fileExtensions.first ?? $0.rawValue) }.joined(separator: ", ")
            throw ToolError.usage(
                "cannot tell the store type of '\(text)' from its extension (\(extensions)); write \(written)")
        }
    }

    /// The file-backed driver whose stores may be directories (LMDB's).
    private static var directoryDriver: KnownDriver? {
        KnownDriver.fileBacked.first {
            if case .file(_, true) = $0.storage { return true }
            return false
        }
    }

    /// The driver whose signature the file's first bytes show, or `nil` when they show none.
    private static func sniff(_ url: URL) -> KnownDriver? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 16), !head.isEmpty else { return nil }
        return KnownDriver.fileBacked.first { $0.recognizes(Array(head)) }
    }

    /// The store type that opens this location.
    ///
    /// - Throws: ``ToolError`` (usage) when the driver is not part of this build.
    public func storeType() throws -> StoreType {
        KnownDriver.registerAll()
        if let type = StoreType.named(scheme.driverName) { return type }
        let available = KnownDriver.allCases.map(\.driverName).joined(separator: ", ")
        throw ToolError.usage(
            "the \(scheme.driverName) driver is not available in this build of strata (needed for '\(self)'); available: \(available)"
        )
    }

    /// Whether something exists at the location (always `false` for `memory:`; for `memory:NAME`,
    /// whether that store was opened earlier in this process; for a server's store, whether its
    /// schema holds a store, `false` also when the server cannot be reached: opening it says why).
    public var exists: Bool {
        guard let url else { return false }
        if !scheme.isFileBacked {
            // A server that cannot be reached counts as "nothing there"; opening the store then
            // reports the connection error itself.
            return
                (try? storeType().factory.metadata(
                    at: url, options: StoreOptions(isReadOnly: true, createIfMissing: false))) != nil
        }
        return FileManager.default.fileExists(atPath: url.path)
    }

    /// Whether the store lives in a file or directory (every scheme but `memory:` and server stores).
    public var isFileBacked: Bool { scheme.isFileBacked }

    /// Whether the store lives on a database server (`postgres://`).
    public var isOnServer: Bool { scheme.isOnServer }

    /// A path (or URL, without its password) for messages.
    public var displayName: String {
        guard let url else { return "memory:" }
        switch scheme.storage {
        case .memory: return url.absoluteString
        case .server: return url.storeName
        case .file: return url.path
        }
    }

    public var description: String {
        guard let url else { return "memory:" }
        switch scheme.storage {
        case .memory: return url.absoluteString
        case .server: return url.storeName
        case .file: return "\(scheme.rawValue):\(url.path)"
        }
    }
}
