import Foundation
import PropertyBased
import Strata
import StrataTesting
import StrataTools
import Synchronization
import Testing

/// How many cases to run and from which seed: `STRATA_ROUNDTRIP_COUNT` (default 200, the CI run),
/// `STRATA_ROUNDTRIP_FIRST_SEED` (default 1); `STRATA_ROUNDTRIP_SEED` replays one seed.
/// scripts/roundtrip.sh sets them.
struct RoundTripSettings: Sendable {
    var firstSeed: UInt64
    var count: Int
    /// `STRATA_ROUNDTRIP_SURVEY=1`: run every seed and list each failing one, without shrinking
    /// (for long campaigns; replay a listed seed to shrink it).
    var survey = false
    /// `STRATA_ROUNDTRIP_ALL_PAIRS=1`: convert every store to every other driver (default: to one,
    /// rotating with the seed, so three consecutive seeds cover every pair).
    var allPairs = false

    static var current: RoundTripSettings {
        let environment = ProcessInfo.processInfo.environment
        if let seed = environment["STRATA_ROUNDTRIP_SEED"].flatMap(UInt64.init) {
            // A replay converts through every pair.
            return RoundTripSettings(
                firstSeed: seed, count: 1, survey: environment["STRATA_ROUNDTRIP_SURVEY"] == "1", allPairs: true)
        }
        return RoundTripSettings(
            firstSeed: environment["STRATA_ROUNDTRIP_FIRST_SEED"].flatMap(UInt64.init) ?? 1,
            count: environment["STRATA_ROUNDTRIP_COUNT"].flatMap(Int.init) ?? 200,
            survey: environment["STRATA_ROUNDTRIP_SURVEY"] == "1",
            allPairs: environment["STRATA_ROUNDTRIP_ALL_PAIRS"] == "1")
    }
}

extension RoundTripCase: CustomTestStringConvertible {
    public var testDescription: String { "\n" + description + "\nreplay: scripts/roundtrip.sh --seed \(seed)" }
}

/// Seeds that fail for a reason not fixed yet, with the stage that fails and why (also in
/// docs/compatibility.md, known limits). Their failures in that stage are recorded as known issues:
/// still printed, not failing the run, and failing it again once the seed passes.
let roundTripKnownIssues: [UInt64: (stage: RoundTripStage, reason: String)] = [
    80: (
        .recovery,
        "SQLite recovery without Z_MODELCACHE: an attribute café (column ZCAFÉ) and a to-one café in a sibling entity (key ZCAFÉ1, entity column Z<n>_CAFÉ, named from the stem) share a table; the tables alone do not say which column the entity column belongs to"
    )
]

/// Records `failures` of the case with `seed`: those of a known issue as known issues.
func recordRoundTripFailures(_ failures: [(stage: RoundTripStage, message: String)], seed: UInt64, limit: Int) {
    let known = roundTripKnownIssues[seed]
    let expected = failures.filter { $0.stage == known?.stage }
    let unexpected = failures.filter { $0.stage != known?.stage }
    for failure in unexpected.prefix(limit) {
        Issue.record(
            "seed \(seed) [\(failure.stage.rawValue)] \(failure.message)\nreplay: scripts/roundtrip.sh --seed \(seed)")
    }
    if let known {
        withKnownIssue("seed \(seed): \(known.reason)", isIntermittent: false) {
            for failure in expected.prefix(limit) {
                Issue.record("seed \(seed) [\(failure.stage.rawValue)] \(failure.message)")
            }
        }
    }
}

@Suite("Generative round trip")
struct RoundTripTests {
    @Test("random models and graphs save, reopen, convert, validate and recover the same on every driver")
    func randomCases() async {
        let settings = RoundTripSettings.current
        let last = settings.firstSeed + UInt64(max(settings.count, 1)) - 1
        print(
            "round trip: seeds \(settings.firstSeed)...\(last) (\(settings.count) models × \(RoundTripDriver.allCases.count) drivers); replay one with scripts/roundtrip.sh --seed N"
        )
        if settings.survey {
            survey(settings)
            return
        }
        // Seeds are handed out in order, whatever random source PropertyBased passes in: the run is
        // the same every time, and each case names its seed.
        let nextSeed = Atomic<UInt64>(settings.firstSeed)
        let generator = Generator<RoundTripCase, [RoundTripCase]>(
            run: { _ in
                let seed = nextSeed.wrappingAdd(1, ordering: .relaxed).oldValue
                do {
                    return try RoundTripCase.generate(seed: seed)
                } catch {
                    // A model the generator makes always builds; if not, this case reports it.
                    return RoundTripCase(
                        seed: seed, model: RoundTripModelSpec(entities: [], configurations: []),
                        graph: RoundTripGraph(objects: [RoundTripObject(entity: "generator failed: \(error)")]))
                }
            },
            shrink: { $0.shrinkCandidates() })
        // Once a case fails, shrinking reruns only the stages that failed.
        let focus = Mutex<Set<RoundTripStage>?>(nil)
        let started = ContinuousClock.now  // reported only; no check depends on time
        await propertyCheck(count: settings.count, input: generator) { testCase in
            let stages = focus.withLock { $0 } ?? Set(RoundTripStage.allCases)
            // A known issue's stage runs after the property check (PropertyBased counts known issues).
            let known = roundTripKnownIssues[testCase.seed].map { Set([$0.stage]) } ?? []
            let failures = RoundTripRunner.run(testCase, stages: stages.subtracting(known), allPairs: settings.allPairs)
            guard !failures.isEmpty else { return }
            focus.withLock { $0 = Set(failures.map(\.stage)) }
            recordRoundTripFailures(failures, seed: testCase.seed, limit: 20)
        }
        for (seed, known) in roundTripKnownIssues.sorted(by: { $0.key < $1.key })
        where (settings.firstSeed...last).contains(seed) {
            do {
                let failures = RoundTripRunner.run(
                    try RoundTripCase.generate(seed: seed), stages: [known.stage], allPairs: settings.allPairs)
                recordRoundTripFailures(failures, seed: seed, limit: 20)
            } catch {
                Issue.record("seed \(seed): the generator made a model that does not build: \(error)")
            }
        }
        print("round trip: \(settings.count) cases in \(ContinuousClock.now - started)")
    }

    /// Runs every seed of `settings` and records one issue per failing seed, without shrinking.
    func survey(_ settings: RoundTripSettings) {
        var failing: [UInt64] = []
        let started = ContinuousClock.now  // reported only; no check depends on time
        for seed in settings.firstSeed..<settings.firstSeed + UInt64(settings.count) {
            // Printed first, so a case that ends the process (a trap) still names its seed.
            print("round trip: seed \(seed)")
            let failures: [(stage: RoundTripStage, message: String)]
            do {
                let testCase = try RoundTripCase.generate(seed: seed)
                // One seed replayed: show the whole case before it runs (a trap ends the process).
                if settings.count == 1 { print(testCase.description) }
                failures = RoundTripRunner.run(testCase, allPairs: settings.allPairs)
            } catch {
                failures = [(.save, "the generator made a model that does not build: \(error)")]
            }
            guard !failures.isEmpty else { continue }
            failing.append(seed)
            recordRoundTripFailures(failures, seed: seed, limit: 6)
        }
        print(
            "round trip survey: \(failing.count) of \(settings.count) seeds fail: \(failing) (\(ContinuousClock.now - started))"
        )
    }
}
