// swift-tools-version:6.1
// Strata's cross-driver benchmarks: a package of its own so users of the library never build it
// (nor GRDB). Run from the repository root with `scripts/bench.sh`; see docs/benchmarks.md.
import PackageDescription

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // Our own shims (the main package's driver shims are named CSQLite/CLMDB; these must not clash).
        .systemLibrary(
            name: "CSQLiteBench", path: "Sources/CSQLiteBench", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CLMDBBench", path: "Sources/CLMDBBench", pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]),
        // libxml2's streaming reader, the XML section's raw baseline (the driver's module is CLibXML2).
        .systemLibrary(
            name: "CLibXML2Bench", path: "Sources/CLibXML2Bench", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]),
        // libpq, the raw PostgreSQL baseline (the driver's module is CLibPQ).
        .systemLibrary(
            name: "CLibPQBench", path: "Sources/CLibPQBench", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // The peers: raw SQLite, raw LMDB, raw libpq and GRDB, behind the same BenchContender protocol as Strata;
        // and the XML section (libxml2's reader, write + fsync, memory at rest).
        .target(
            name: "BenchPeers",
            dependencies: [
                "CSQLiteBench", "CLMDBBench", "CLibXML2Bench", "CLibPQBench",
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataTools", package: "Strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/BenchPeers"),
        .executableTarget(
            name: "strata-benchmarks",
            dependencies: [
                "BenchPeers", .product(name: "StrataTools", package: "Strata"),
                .product(name: "StrataTesting", package: "Strata"), .product(name: "Strata", package: "Strata"),
                .product(name: "StrataPostgreSQL", package: "Strata"),
            ],
            path: "Sources/strata-benchmarks"),
    ],
    swiftLanguageModes: [.v6]
)
