import Foundation
import StrataSQLite
import StrataTesting

/// Access to the shared corpus of real Core Data files (`STRATA_CORPUS`, see its README).
enum Corpus {
    static var root: String? { ProcessInfo.processInfo.environment["STRATA_CORPUS"] }
    static var isAvailable: Bool { root != nil }

    /// The 9 Apple-written SQLite stores.
    static let stores = [
        "Recipes.sqlite", "SampleModel_V1.sqlite", "SampleModel_V2.sqlite", "SampleModel2_V1.sqlite",
        "SampleModel3_V1.sqlite", "test_data_ios_NoteStore.sqlite", "test_data_ios_Accounts3.sqlite",
        "test_data_ios_kik.sqlite", "test_data_macos_knowledgec-10.13.db",
    ]

    /// Where this test process puts its copies: one directory, removed when the process exits
    /// (each copy has its own subdirectory, so tests running at once never share a file).
    private static let copies: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-sqlite-tests-\(UUID().uuidString)")
        atexit { try? FileManager.default.removeItem(at: Corpus.copies) }
        return url
    }()

    /// Copies a corpus store into a fresh temporary directory (the corpus is read-only and SQLite
    /// may want to create side files) and returns the copy's path. Copies are removed when the
    /// test process exits.
    static func copyOfStore(_ name: String) throws -> String {
        guard let root else { throw CorpusMissing() }
        let directory = copies.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let target = directory.appendingPathComponent(name)
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: root).appendingPathComponent("sqlite").appendingPathComponent(name), to: target)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
        return target.path
    }

    struct CorpusMissing: Error {}
}

extension TemporaryDirectory {
    /// A path inside the directory.
    func path(_ name: String) -> String { file(name).path }
}
