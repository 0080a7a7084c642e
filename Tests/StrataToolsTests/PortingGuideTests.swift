import Foundation
import StrataTesting
import Testing

/// The porting guide's "not yet" entries must name only what Strata does not have: a row that
/// says **not yet** beside a public symbol that exists contradicts the code.
@Suite("Porting guide")
struct PortingGuideTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("no 'not yet' entry of the porting guide names a public symbol that exists")
    func notYetEntriesNameMissingSymbols() throws {
        let guide = try String(contentsOf: Self.root.appending(path: "docs/porting-from-core-data.md"), encoding: .utf8)
        let symbols = try PublicSymbols(scanning: ["Sources", "Drivers"].map { Self.root.appending(path: $0) })
        let entries = NotYetEntries(guide)
        #expect(entries.names.count > 10, "the guide's not-yet entries were not found; has its table format changed?")
        var contradictions: [String] = []
        for entry in entries.names where symbols.contains(entry.name) {
            contradictions.append(
                "line \(entry.line): `\(entry.name)` is marked not yet but \(symbols.where(entry.name))")
        }
        #expect(contradictions.isEmpty, "\(contradictions.joined(separator: "\n"))")
    }

    @Test("the checker finds public symbols, qualified names and initializer labels")
    func checkerFindsSymbols() throws {
        let directory = try TemporaryDirectory()
        let source = """
            public final class Widget {
                public func spin(times: Int) {}
                public convenience init(byMerging others: [Widget]) { self.init() }
                public init() {}
                func hidden() {}
            }
            extension Widget {
                public var colour: Int { 0 }
            }
            """
        try source.write(to: directory.url.appending(path: "Widget.swift"), atomically: true, encoding: .utf8)
        let symbols = try PublicSymbols(scanning: [directory.url])
        #expect(symbols.contains("Widget"))
        #expect(symbols.contains("NSWidget"))
        #expect(symbols.contains("spin(times:)"))
        #expect(symbols.contains("Widget.colour"))
        #expect(!symbols.contains("Gadget.colour"))
        #expect(symbols.contains("init(byMerging:)"))
        #expect(!symbols.contains("init(byCopying:)"))
        #expect(!symbols.contains("hidden()"))

        let guide = """
            | Core Data | Strata | Notes |
            |---|---|---|
            | `spin(times:)` | **not yet** | |
            | `colour` | same | `Widget.tint`: **not yet**. Other things are fine. |
            | `shade` | same | Kept in `userInfo`, not evaluated (**not yet**). |
            | Nothing named | **not yet** | |
            """
        let names = NotYetEntries(guide).names.map(\.name)
        #expect(names == ["spin(times:)", "Widget.tint"])
    }
}

/// The public declarations of Swift files, by name and by enclosing top-level type.
struct PublicSymbols {
    /// Declared name → the top-level types (or extensions) holding it ("" at top level).
    private var owners: [String: Set<String>] = [:]
    /// Initializer first labels, by owner.
    private var initializers: [String: Set<String>] = [:]

    init(scanning directories: [URL]) throws {
        let declaration = try Regex(
            #"^\s*(?:@[A-Za-z]+(?:\([^)]*\))?\s+)*public\s+(?:(?:final|static|class|override|convenience|required|nonisolated|mutating|open|indirect|dynamic)\s+)*(func|var|let|class|struct|enum|protocol|typealias|actor|init|case)\s*[?!]?\s*([A-Za-z_][A-Za-z0-9_]*)?(\(\s*([A-Za-z_][A-Za-z0-9_]*))?"#
        )
        let topLevel = try Regex(
            #"^(?:public\s+|package\s+|internal\s+|final\s+|open\s+)*(?:extension|class|struct|enum|protocol|actor)\s+([A-Za-z_][A-Za-z0-9_.]*)"#
        )
        for directory in directories {
            guard let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else {
                continue
            }
            for case let file as URL in files where file.pathExtension == "swift" {
                var owner = ""
                for line in try String(contentsOf: file, encoding: .utf8).split(
                    separator: "\n", omittingEmptySubsequences: false)
                {
                    if let match = line.firstMatch(of: topLevel), let name = match.output[1].substring {
                        owner = String(name.split(separator: ".").last ?? name)
                        if line.hasPrefix("public") { owners[owner, default: []].insert("") }
                    }
                    guard let match = line.firstMatch(of: declaration), let kind = match.output[1].substring else {
                        continue
                    }
                    if kind == "init" {
                        let label = match.output[4].substring.map(String.init) ?? ""
                        initializers[owner, default: []].insert(label)
                    } else if let name = match.output[2].substring {
                        owners[String(name), default: []].insert(line.first?.isWhitespace == true ? owner : "")
                    }
                }
            }
        }
    }

    /// Whether `name` is declared: a bare name, `Type.member`, `name(label:)`, `init(label:)`,
    /// with Core Data's `NS` prefix ignored.
    func contains(_ name: String) -> Bool { !matches(name).isEmpty }

    /// Where `name` is declared, for messages.
    func `where`(_ name: String) -> String {
        "Strata declares it in " + matches(name).map { $0.isEmpty ? "the module" : $0 }.sorted().joined(separator: ", ")
    }

    private func matches(_ written: String) -> Set<String> {
        var name = written
        if name.hasPrefix("NS"), name.dropFirst(2).first?.isUppercase == true { name.removeFirst(2) }
        let base = name.split(separator: "(", maxSplits: 1).first.map(String.init) ?? name
        let parts = base.split(separator: ".").map(String.init)
        let member = parts.last ?? base
        let type = parts.count > 1 ? parts[parts.count - 2] : nil
        if member == "init" {
            let label =
                name.split(separator: "(", maxSplits: 1).dropFirst().first.map {
                    String($0.prefix { $0 != ":" && $0 != ")" })
                } ?? ""
            return Set(
                initializers.filter { (owner, labels) in labels.contains(label) && (type == nil || owner == type) }.keys
            )
        }
        let found = owners[member] ?? []
        guard let type else { return found }
        return found.filter { $0 == type }
    }
}

/// The names the guide marks **not yet**: in a table row whose Strata column is **not yet**, the
/// backticked names of its first column; in a note of the form "`name`: **not yet**", the
/// backticked names of that sentence.
struct NotYetEntries {
    struct Entry {
        var line: Int
        var name: String
    }

    var names: [Entry] = []

    init(_ guide: String) {
        let marker = "**not yet**"
        for (index, line) in guide.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where line.hasPrefix("|") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 2 else { continue }
            if cells[1].hasPrefix(marker) {
                for name in Self.backticked(cells[0]) { names.append(Entry(line: index + 1, name: name)) }
            }
            for cell in cells.dropFirst() {
                var rest = Substring(cell)
                while let hit = rest.range(of: marker) {
                    let before = rest[..<hit.lowerBound]
                    let sentence =
                        before.range(of: ". ", options: .backwards).map { before[$0.upperBound...] } ?? before
                    // "`name`: **not yet**" names what is missing; "(**not yet**)" after a
                    // description of what exists does not.
                    if sentence.trimmingCharacters(in: .whitespaces).hasSuffix(":") {
                        for name in Self.backticked(sentence) { names.append(Entry(line: index + 1, name: name)) }
                    }
                    rest = rest[hit.upperBound...]
                }
            }
        }
    }

    /// The identifiers in backticks: `a`, `b(c:)`, `T.m`; several separated by `/` are split.
    private static func backticked(_ text: some StringProtocol) -> [String] {
        let parts: [String] = String(text).components(separatedBy: "`")
        var names: [String] = []
        for index in stride(from: 1, to: parts.count, by: 2) {
            names += parts[index].components(separatedBy: "/")
        }
        return names.filter { $0.first?.isLetter == true && !$0.contains(" ") }
    }
}
