import Foundation
import Strata
import Testing

@testable import StrataPostgreSQL

@Suite("PostgreSQL store URLs")
struct PostgreSQLLocationTests {
    @Test("a URL gives user, host, port, database, schema and options; the password never appears in its name")
    func parsing() throws {
        let url = try #require(
            URL(
                string:
                    "postgresql://ada:s3cr%40t@db.example.com:6543/shop?schema=Sales&pool_size=8&sslmode=require&statement_timeout=2.5"
            ))
        let location = try PostgreSQLLocation(url: url)
        #expect(location.user == "ada")
        #expect(location.host == "db.example.com")
        #expect(location.port == 6543)
        #expect(location.database == "shop")
        #expect(location.schema == "Sales")
        #expect(location.poolSize == 8)
        #expect(location.statementTimeout == 2.5)
        #expect(location.connectionOptions["sslmode"] == "require")
        #expect(location.displayName == "postgres://ada@db.example.com:6543/shop?schema=Sales")
        #expect(!location.displayName.contains("s3cr"))
        #expect(!"\(location)".contains("s3cr"))
        let parameters = Dictionary(location.connectionParameters, uniquingKeysWith: { a, _ in a })
        #expect(parameters["password"] == "s3cr@t")
        #expect(parameters["sslmode"] == "require")
        #expect(parameters["options"]?.contains("statement_timeout=2500") == true)
        #expect(parameters["options"]?.contains("lock_timeout=5000") == true)
        #expect(PostgreSQLLocation.redacted(url).contains("***"))
        #expect(!PostgreSQLLocation.redacted(url).contains("s3cr"))
    }

    @Test(
        "defaults: schema public, four connections, the store timeout as lock timeout; store options win over the URL")
    func defaults() throws {
        let url = try #require(URL(string: "postgres://localhost/app"))
        let location = try PostgreSQLLocation(url: url, options: StoreOptions(timeout: 1.5, values: ["pool_size": "2"]))
        #expect(location.schema == "public")
        #expect(location.poolSize == 2)
        #expect(location.lockTimeout == 1.5)
        #expect(location.user == nil)
        let bare = try PostgreSQLLocation(url: try #require(URL(string: "postgres:///app?host=/var/run/postgresql")))
        #expect(bare.host == nil)
        #expect(bare.connectionOptions["host"] == "/var/run/postgresql")
    }

    @Test("bad URLs and options are invalid requests naming the problem, without the password")
    func badInput() throws {
        let cases = [
            "postgres://u:pw123@h/db?colour=red": "unknown option 'colour'",
            "postgres://u:pw123@h/db?pool_size=0": "pool_size",
            "postgres://u:pw123@h/db?pool_size=1e300": "pool_size",
            "postgres://u:pw123@h/db?statement_timeout=soon": "statement_timeout",
            "postgres://u:pw123@h/db?schema=": "schema name",
            "postgres://u:pw123@h/db?schema=\(String(repeating: "x", count: 64))": "schema name",
            "mysql://u:pw123@h/db": "postgres://",
        ]
        for (text, expected) in cases {
            let url = try #require(URL(string: text))
            do {
                _ = try PostgreSQLLocation(url: url)
                Issue.record("\(text) was accepted")
            } catch let error as StoreError {
                #expect(error.code == .invalidRequest, "\(text)")
                #expect("\(error)".contains(expected), "\(text): \(error)")
                #expect(!"\(error)".contains("pw123"), "\(text): \(error)")
            }
        }
    }

    @Test("the notification channel names the schema, or a hash of it when too long")
    func channel() throws {
        let short = try PostgreSQLLocation(url: try #require(URL(string: "postgres://h/db?schema=inventory")))
        #expect(short.channel == "strata:inventory")
        let name = String(repeating: "é", count: 31)  // 62 bytes
        let long = try PostgreSQLLocation(
            url: try #require(
                URL(
                    string:
                        "postgres://h/db?schema=\(name.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!)"
                )))
        #expect(long.channel.utf8.count <= 63)
        #expect(long.channel.hasPrefix("strata:"))
    }
}

@Suite("PostgreSQL text escaping and notification payloads")
struct PostgreSQLCodingTests {
    @Test("stored text round-trips every string, keeps plain strings as they are, and sorts as the strings sort")
    func escaping() throws {
        let samples = [
            "", "plain", "a\u{0}b", "\u{1}", "\u{0}\u{0}", "\u{1}\u{2}", "a\u{1}", "e\u{301}", "👩‍👩‍👧", "\u{0}x", "\u{2}",
            "a",
        ]
        for sample in samples {
            let stored = TextEscaping.escaped(sample)
            #expect(!stored.utf8.contains(0), "\(sample.debugDescription) stores a NUL")
            let decoded = Array(stored.utf8).withUnsafeBytes { TextEscaping.decode($0) }
            #expect(decoded.unicodeScalars.elementsEqual(sample.unicodeScalars), "\(sample.debugDescription)")
            if !sample.utf8.contains(where: { $0 <= 1 }) { #expect(stored == sample) }
        }
        // Byte order of the stored forms is the scalar order of the strings.
        for a in samples {
            for b in samples {
                let stored = Array(TextEscaping.escaped(a).utf8).lexicographicallyPrecedes(
                    Array(TextEscaping.escaped(b).utf8))
                #expect(
                    stored
                        == Array(a.unicodeScalars.map(\.value)).lexicographicallyPrecedes(b.unicodeScalars.map(\.value)),
                    "\(a.debugDescription) < \(b.debugDescription)")
            }
        }
        // Text another program wrote with a lone U+0001 stays as it is.
        #expect(Array("x\u{1}y".utf8).withUnsafeBytes { TextEscaping.decode($0) } == "x\u{1}y")
    }

    @Test("a save's changes fit in payloads under the size limit, come back whole, and a driver skips its own")
    func payloads() throws {
        var changes = RemoteChanges()
        changes.inserted = (1...5_000).map { RowID(entity: 3, primaryKey: $0) } + [RowID(entity: 4, primaryKey: 9)]
        changes.updated = stride(from: 1, to: 20_000, by: 2).map { RowID(entity: 3, primaryKey: Int64($0)) }
        changes.deleted = [RowID(entity: 5, primaryKey: Int64.max)]
        let payloads = RemoteChangePayload.encode(changes, token: "abc")
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count <= RemoteChangePayload.maximumBytes })
        var decoded = RemoteChanges()
        for payload in payloads {
            let part = try #require(RemoteChangePayload.decode(payload, ignoring: "other"))
            decoded.inserted += part.inserted
            decoded.updated += part.updated
            decoded.deleted += part.deleted
            #expect(RemoteChangePayload.decode(payload, ignoring: "abc") == nil)
        }
        #expect(Set(decoded.inserted) == Set(changes.inserted))
        #expect(Set(decoded.updated) == Set(changes.updated))
        #expect(decoded.deleted == changes.deleted)
        #expect(payloads[0].hasPrefix("S1 abc i3:1-5000"))
    }

    @Test("payloads that are not Strata's, malformed or announcing too many rows are ignored")
    func hostilePayloads() {
        for payload in [
            "", "hello", "S1", "S1 t x3:1", "S1 t i3:0", "S1 t i3:5-2", "S1 t i3:1-9223372036854775807", "S1 t i:1",
            "S1 t i3:a",
        ] {
            #expect(RemoteChangePayload.decode(payload, ignoring: "me") == nil, "\(payload)")
        }
        #expect(RemoteChangePayload.decode("S1 t i3:1-10 d2:4", ignoring: "me")?.inserted.count == 10)
    }
}
