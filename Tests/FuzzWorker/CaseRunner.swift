import Foundation
import Strata
import StrataTesting
import StrataTools

/// What a target gets when the worker starts: where the corpus is, and a scratch directory.
struct TargetSetup {
    /// The Apple-written corpus (`STRATA_CORPUS`), when given.
    var corpus: URL?
    /// A directory for base stores and damaged copies, removed when the worker exits normally.
    let scratch: TemporaryDirectory

    init(corpus: URL?) throws {
        self.corpus = corpus
        scratch = try TemporaryDirectory(prefix: "strata-fuzz")
    }
}

/// One kind of fuzz case.
protocol FuzzTarget: AnyObject {
    /// Prepares case `index` (writes a damaged file, picks an input) and says what it will do.
    func prepare(_ index: Int, _ random: inout SeededGenerator) throws -> String
    /// Runs the prepared case and names its outcome; throws ``CaseFailure`` when the code under test
    /// broke a rule (an error of an unexpected type, two answers that differ).
    func run() throws -> String
    /// The files of the prepared case (the damaged store, the input), for `--keep`.
    var artifacts: [URL] { get }
}

/// A rule the code under test broke in one case.
struct CaseFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The case loop: the `begin`/`pass`/`fail` protocol of `CaseWorker`.
enum CaseRunner {
    /// The seed of case `index` of a run seeded `seed`: a SplitMix step over both, so neighbouring
    /// cases are unrelated and any case can run alone.
    static func caseSeed(_ seed: UInt64, _ index: Int) -> UInt64 {
        var generator = SeededGenerator(seed: seed ^ (UInt64(truncatingIfNeeded: index) &* 0xD1B5_4A32_D192_ED03))
        return generator.next()
    }

    /// Runs `cases`; with `keep`, copies each prepared case's files into `keep/<case>/` first.
    static func run(_ target: any FuzzTarget, seed: UInt64, cases: Range<Int>, keep: URL? = nil) {
        for index in cases {
            var random = SeededGenerator(seed: caseSeed(seed, index))
            let what: String
            do {
                what = try target.prepare(index, &random)
            } catch {
                emit("begin \(index) prepare")
                emit("fail \(index) the case could not be prepared: \(error)")
                continue
            }
            if let keep { save(target.artifacts, to: keep.appendingPathComponent("\(index)")) }
            emit("begin \(index) \(what)")
            do {
                emit("pass \(index) \(try target.run())")
            } catch let failure as CaseFailure {
                emit("fail \(index) \(failure)")
            } catch {
                emit("fail \(index) \(Outcome.describe(error))")
            }
        }
    }

    /// Copies a case's files for a person to look at.
    static func save(_ files: [URL], to folder: URL) {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for file in files where FileManager.default.fileExists(atPath: file.path) {
                let copy = folder.appendingPathComponent(file.lastPathComponent)
                try? FileManager.default.removeItem(at: copy)  // replaced just below
                try FileManager.default.copyItem(at: file, to: copy)
            }
            FileHandle.standardError.write(Data("kept \(files.map(\.lastPathComponent)) in \(folder.path)\n".utf8))
        } catch {
            FileHandle.standardError.write(Data("cannot keep the case's files in \(folder.path): \(error)\n".utf8))
        }
    }

    /// Writes one line to standard output at once (no buffering: the line is out before a crash).
    static func emit(_ line: String) {
        let flat = line.replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
        FileHandle.standardOutput.write(Data((String(flat.prefix(2_000)) + "\n").utf8))
    }
}

/// Naming errors: the project's typed errors pass, anything else is a finding.
enum Outcome {
    /// A short name for a typed error (`corrupt`, `model.unreadable`, `tool.failure`), or `nil` when
    /// the error is of a type callers cannot match on.
    static func typedName(_ error: any Error) -> String? {
        switch error {
        case let error as StoreError: return "\(error.code)"
        case let error as ModelError: return "model.\(error.code)"
        case is ObjectValidationError: return "validation"
        case is FetchPredicateError: return "predicate"
        case let error as ToolError:
            // A tool error wraps whatever it caught; one that wraps a foreign error shows its text.
            let foreign = [
                "Error Domain=", "The operation could not be completed", "SQLiteError", "CocoaError", "LMDBEngineError",
            ]
            if foreign.contains(where: { error.message.contains($0) }) { return nil }
            return "tool.\(error.kind)"
        case is JSONSyntaxError: return "json"
        case is InterchangeProblem: return "interchange"
        default: return nil
        }
    }

    /// Whether to print every error on standard error (`STRATA_FUZZ_VERBOSE=1`, used by replays).
    static let verbose = ProcessInfo.processInfo.environment["STRATA_FUZZ_VERBOSE"] == "1"

    /// One line for any error, naming its type.
    static func describe(_ error: any Error) -> String { "\(type(of: error)): \(error)" }

    /// Runs `body`; a typed error (or one of type `accepted`) becomes `stage:name`, any other a
    /// ``CaseFailure``.
    static func stage(_ stage: String, accepting accepted: (any Error.Type)? = nil, _ body: () throws -> Void) throws
        -> String?
    {
        do {
            try body()
            return nil
        } catch let failure as CaseFailure {
            throw failure
        } catch  where accepted.map({ type(of: error) == $0 }) ?? false {
            return "\(stage):\(type(of: error))"
        } catch {
            if verbose { FileHandle.standardError.write(Data("\(stage): \(describe(error))\n".utf8)) }
            guard let name = typedName(error) else {
                throw CaseFailure("\(stage): an error of an unexpected type: \(describe(error))")
            }
            return "\(stage):\(name)"
        }
    }
}
