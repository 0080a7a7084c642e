// swift-tools-version:6.1
import PackageDescription

let checks: [SwiftSetting] = [.define("STRATA_CHECKS", .when(configuration: .debug))]

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "StrataInMemory", targets: ["StrataInMemory"]),
        .library(name: "StrataTesting", targets: ["StrataTesting"]),
        .library(name: "StrataTools", targets: ["StrataTools"]),
        .library(name: "StrataSQLite", targets: ["StrataSQLite"]),
        .library(name: "StrataLMDB", targets: ["StrataLMDB"]),
        .library(name: "StrataXML", targets: ["StrataXML"]),
        .library(name: "StrataPostgreSQL", targets: ["StrataPostgreSQL"]),
        .executable(name: "strata", targets: ["strata"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `swift package generate-documentation` (the DocC catalog in Sources/Strata/Strata.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // StoreLog: drivers report statements and transactions through swift-log.
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // Test-only: the generative round-trip suite (Tests/RoundTripTests) shrinks failures with it.
        .package(url: "https://github.com/x-sheep/swift-property-based", exact: "2.0.1"),
    ],
    targets: [
        // The core: model, predicates, objects, contexts, coordinator, row cache, driver protocol.
        // It imports no driver and no C library; its one C target is a prefetch hint.
        .target(name: "CStrataPrefetch", path: "Sources/CStrataPrefetch"),
        .target(
            name: "Strata", dependencies: ["CStrataPrefetch", .product(name: "Logging", package: "swift-log")],
            path: "Sources/Strata", swiftSettings: checks),
        .target(name: "StrataInMemory", dependencies: ["Strata"], path: "Drivers/InMemory", swiftSettings: checks),
        .systemLibrary(
            name: "CSQLite", path: "Drivers/SQLite/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev", "zlib1g-dev"])]),
        .target(
            name: "StrataSQLite", dependencies: ["Strata", "CSQLite"], path: "Drivers/SQLite/StrataSQLite",
            swiftSettings: checks),
        .systemLibrary(
            name: "CLMDB", path: "Drivers/LMDB/CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        .target(
            name: "StrataLMDB", dependencies: ["Strata", "CLMDB"], path: "Drivers/LMDB/StrataLMDB",
            swiftSettings: checks),
        // Saves in a loop until killed; the LMDB kill test spawns it.
        .executableTarget(
            name: "strata-lmdb-killtest", dependencies: ["Strata", "StrataLMDB"], path: "Drivers/LMDB/KillTest"),
        .systemLibrary(
            name: "CLibXML2", path: "Drivers/XML/CLibXML2", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]),
        .target(
            name: "StrataXML", dependencies: ["Strata", "CLibXML2"], path: "Drivers/XML/StrataXML",
            swiftSettings: checks),
        // Saves to an XML store in a loop until killed; the XML crash-safety test runs it.
        .executableTarget(
            name: "strata-xml-killtest", dependencies: ["StrataXML", "Strata"], path: "Drivers/XML/KillTest"),
        .systemLibrary(
            name: "CLibPQ", path: "Drivers/PostgreSQL/CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .target(
            name: "StrataPostgreSQL", dependencies: ["Strata", "CLibPQ"], path: "Drivers/PostgreSQL/StrataPostgreSQL",
            swiftSettings: checks),
        // One process of the PostgreSQL tests that need several: saves, conflicts and merges on a shared store.
        .executableTarget(
            name: "strata-postgres-worker", dependencies: ["Strata", "StrataPostgreSQL", "StrataTesting"],
            path: "Drivers/PostgreSQL/Worker"),
        .target(
            name: "StrataTesting", dependencies: ["Strata", .product(name: "Logging", package: "swift-log")],
            path: "Sources/StrataTesting", swiftSettings: checks),
        .target(
            name: "StrataTools",
            dependencies: ["Strata", "StrataInMemory", "StrataSQLite", "StrataXML", "StrataLMDB", "StrataPostgreSQL"],
            path: "Sources/StrataTools", swiftSettings: checks),
        .executableTarget(
            name: "strata",
            dependencies: ["StrataTools", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/strata"),
        // Runs numbered fuzz cases (damaged stores, parsers, predicate translation) and the kill tests
        // save loops; the reliability tests spawn it so that a trap ends one case, not the test run.
        .executableTarget(
            name: "strata-fuzz-worker",
            dependencies: [
                "Strata", "StrataInMemory", "StrataSQLite", "StrataXML", "StrataLMDB", "StrataTools", "StrataTesting",
                "CSQLite", "CLMDB",
            ],
            path: "Tests/FuzzWorker"),
        .testTarget(name: "StrataTests", dependencies: ["Strata", "StrataInMemory", "StrataTesting"]),
        .testTarget(name: "StrataInMemoryTests", dependencies: ["Strata", "StrataInMemory", "StrataTesting"]),
        .testTarget(
            name: "StrataLMDBTests", dependencies: ["StrataLMDB", "Strata", "StrataTesting", "strata-lmdb-killtest"]),
        .testTarget(
            name: "StrataSQLiteTests",
            dependencies: ["StrataSQLite", "Strata", "StrataTesting", .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "StrataXMLTests",
            dependencies: ["StrataXML", "Strata", "StrataTesting", "StrataInMemory", "strata-xml-killtest"]),
        .testTarget(
            name: "StrataPostgreSQLTests",
            dependencies: ["StrataPostgreSQL", "Strata", "StrataTesting", "strata-postgres-worker"]),
        .testTarget(
            name: "StrataToolsTests",
            dependencies: ["StrataTools", "strata", "Strata", "StrataInMemory", "StrataTesting"]),
        .testTarget(
            name: "StrataReliabilityTests",
            dependencies: [
                "Strata", "StrataTesting", "StrataTools", "StrataSQLite", "StrataXML", "StrataLMDB",
                "strata-fuzz-worker",
                "strata",
            ]),
        // The generative round-trip suite (docs/compatibility.md): random models and graphs through
        // every driver, `strata convert`, `strata validate` and SQLite model recovery.
        .testTarget(
            name: "RoundTripTests",
            dependencies: [
                "StrataTools", "strata", "Strata", "StrataInMemory", "StrataSQLite", "StrataXML", "StrataLMDB",
                "StrataTesting", .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
