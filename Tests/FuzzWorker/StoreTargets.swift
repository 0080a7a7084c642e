import Foundation
import Strata
import StrataLMDB
import StrataSQLite
import StrataTesting
import StrataTools
import StrataXML

/// Damaged-store cases: a valid store is copied, damaged, and put through ``StoreExercise``.
final class DamagedStoreTarget: FuzzTarget {
    /// A valid store and how to exercise it.
    struct Base {
        var url: URL
        var exercise: StoreExercise
    }

    private let bases: [Base]
    private let damage: (URL, inout SeededGenerator) throws -> String
    private let folder: URL
    private let name: String
    private var work: URL
    private var random = SeededGenerator(seed: 0)
    private var current: Base?

    /// - Parameter work: Where damaged copies go: `folder/name`, with the case number in the name,
    ///   so that a store a case leaves open cannot change what the next case reads.
    init(bases: [Base], work: URL, damage: @escaping (URL, inout SeededGenerator) throws -> String) throws {
        guard !bases.isEmpty else { throw CaseFailure("no base stores") }
        self.bases = bases
        self.folder = work.deletingLastPathComponent()
        self.name = work.lastPathComponent
        self.work = work
        self.damage = damage
    }

    func prepare(_ index: Int, _ random: inout SeededGenerator) throws -> String {
        let base = bases[Int.random(in: 0..<bases.count, using: &random)]
        BaseStores.remove(work)
        work = folder.appendingPathComponent("\(index)-\(name)")
        try BaseStores.copy(base.url, to: work)
        let what = try damage(work, &random)
        current = base
        self.random = random
        return "\(base.url.lastPathComponent): \(what)"
    }

    var artifacts: [URL] { BaseStores.files(of: work) }

    func run() throws -> String {
        guard let current else { throw CaseFailure("no case prepared") }
        let outcome = try current.exercise.run(work, random: &random)
        try checkNothingLeftOpen(current)
        return outcome
    }

    /// Puts the valid store back at the case's path and opens it: a driver the case left open
    /// (an error path that did not close it) would still serve the damaged file.
    private func checkNothingLeftOpen(_ base: Base) throws {
        try BaseStores.copy(base.url, to: work)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: base.exercise.model)
        do {
            let store = try coordinator.addPersistentStore(
                type: base.exercise.type, at: work, options: StoreOptions(isReadOnly: true, timeout: 1))
            let context = ManagedObjectContext(coordinator: coordinator)
            for entity in base.exercise.model.entities {
                _ = try context.count(for: FetchRequest(entityName: entity.name))
            }
            try coordinator.remove(store)
        } catch {
            throw CaseFailure(
                "the valid store put back at the case's path does not read (\(Outcome.describe(error))): the case left a driver of the damaged store open"
            )
        }
    }

    /// A Strata-written store of the conformance model for `type`.
    static func strataWritten(
        _ type: StoreType, _ scheme: KnownDriver, name: String, setup: TargetSetup,
        damage: @escaping (URL, inout SeededGenerator) throws -> String
    ) throws -> DamagedStoreTarget {
        let url = setup.scratch.file(name)
        try BaseStores.make(type, at: url)
        let exercise = StoreExercise(type: type, scheme: scheme, model: ConformanceModel.model)
        return try DamagedStoreTarget(
            bases: [Base(url: url, exercise: exercise)], work: setup.scratch.file("damaged-" + name), damage: damage)
    }

    /// The corpus's Apple-written stores in `folder` whose model Strata recovers.
    static func appleWritten(
        _ type: StoreType, _ scheme: KnownDriver, folder: String, extensions: Set<String>, setup: TargetSetup,
        damage: @escaping (URL, inout SeededGenerator) throws -> String
    ) throws -> DamagedStoreTarget {
        guard let corpus = setup.corpus else {
            throw CaseFailure("this target reads the corpus: set STRATA_CORPUS or pass --corpus")
        }
        let directory = corpus.appendingPathComponent(folder)
        var bases: [Base] = []
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { extensions.contains($0.pathExtension) }.sorted { $0.lastPathComponent < $1.lastPathComponent }
        for file in files {
            let copy = setup.scratch.file("base-" + file.lastPathComponent)
            try FileManager.default.copyItem(at: file, to: copy)
            guard let recovered = try? type.factory.recoverModel(at: copy, options: StoreOptions(isReadOnly: true))
            else {
                continue  // a store whose model Strata cannot recover is covered by the corpus tests, not here
            }
            let exercise = StoreExercise(
                type: type, scheme: scheme, model: recovered.model, readOnly: recovered.requiresReadOnly)
            bases.append(Base(url: copy, exercise: exercise))
        }
        let ext = extensions.sorted().first ?? "store"
        return try DamagedStoreTarget(bases: bases, work: setup.scratch.file("damaged.\(ext)"), damage: damage)
    }
}

/// Every target the worker runs, by name.
enum FuzzTargets {
    static let all: [String: @Sendable (TargetSetup) throws -> any FuzzTarget] = [
        "sqlite": { setup in
            try DamagedStoreTarget.strataWritten(
                .sqlite, .sqlite, name: "base.sqlite", setup: setup, damage: SQLiteDamage.damage)
        },
        "apple-sqlite": { setup in
            try DamagedStoreTarget.appleWritten(
                .sqlite, .sqlite, folder: "sqlite", extensions: ["sqlite", "db"], setup: setup,
                damage: SQLiteDamage.damage)
        },
        "xml": { setup in
            try DamagedStoreTarget.strataWritten(.xml, .xml, name: "base.xml", setup: setup, damage: XMLDamage.damage)
        },
        "apple-xml": { setup in
            try DamagedStoreTarget.appleWritten(
                .xml, .xml, folder: "xml", extensions: ["xml"], setup: setup, damage: XMLDamage.damage)
        },
        "lmdb": { setup in
            try DamagedStoreTarget.strataWritten(
                .lmdb, .lmdb, name: "base.lmdb", setup: setup, damage: LMDBDamage.damage)
        },
        "lmdb-pages": { setup in
            try DamagedStoreTarget.strataWritten(
                .lmdb, .lmdb, name: "base.lmdb", setup: setup, damage: LMDBDamage.damageAnyPage)
        },
        "sqlite-metadata": { setup in
            try DamagedStoreTarget.strataWritten(
                .sqlite, .sqlite, name: "base.sqlite", setup: setup, damage: SQLiteDamage.metadata)
        },
        "xml-metadata": { setup in
            try DamagedStoreTarget.strataWritten(
                .xml, .xml, name: "base.xml", setup: setup, damage: XMLDamage.metadataOnly)
        },
        "json": ParserTargets.json,
        "model-xml": ParserTargets.modelXML,
        "model-archive": ParserTargets.modelArchive,
        "model-cache": ParserTargets.modelCache,
        "iso8601": ParserTargets.iso8601,
        "store-location": ParserTargets.storeLocation,
        "keypath": ParserTargets.keyPath,
        "predicate-sql": { setup in try SQLPredicateTarget(setup: setup) },
    ]

    static let summaries: [String: String] = [
        "sqlite":
            "a Strata-written SQLite store, damaged through SQL and in its pages, then opened, fetched, saved and inspected",
        "apple-sqlite": "the corpus's Apple-written SQLite stores, damaged the same way (needs the corpus)",
        "xml": "a Strata-written XML store, damaged in ids, idrefs, attributes, metadata and nesting",
        "apple-xml": "the corpus's Xcode-written XML store, damaged the same way (needs the corpus)",
        "lmdb":
            "a Strata-written LMDB store, damaged in keys, values and metadata (docs/formats/lmdb.md), its meta pages and its length",
        "lmdb-pages":
            "the same, with raw damage to any page: liblmdb trusts its pages, so this target finds crashes in it (campaigns only)",
        "sqlite-metadata": "a Strata-written SQLite store whose Z_METADATA plist (binary) is damaged or replaced",
        "xml-metadata": "a Strata-written XML store whose metadata plist is damaged (types, numbers, nesting)",
        "json": "JSON interchange files: the parser, the importer's checks, an import when the file checks",
        "model-xml": "Xcode model contents files (ManagedObjectModel(xmlData:)), then the model's archive round trip",
        "model-archive": "Strata's embedded model archive (ManagedObjectModel(encodedRepresentation:))",
        "model-cache": "Apple's Z_MODELCACHE keyed archives (KeyedArchive, ModelCacheDecoder; needs the corpus)",
        "iso8601": "ISO 8601 timestamps of the interchange format: parse, and write then read back",
        "store-location": "store locations as the strata tool reads them (StoreLocation(parsing:))",
        "keypath": "%K key paths in predicates: parse, print and parse again, fetch, evaluate",
        "predicate-sql": "random predicates: the SQLite driver's SQL translation against the in-memory evaluator",
    ]
}
