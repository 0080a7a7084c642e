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
        .executable(name: "strata", targets: ["strata"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // The core: model, predicates, objects, contexts, coordinator, row cache, driver protocol.
        // It imports no driver and no C library.
        .target(name: "Strata", path: "Sources/Strata", swiftSettings: checks),
        .target(name: "StrataInMemory", dependencies: ["Strata"], path: "Drivers/InMemory", swiftSettings: checks),
        .systemLibrary(
            name: "CSQLite", path: "Drivers/SQLite/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev", "zlib1g-dev"])]),
        .target(
            name: "StrataSQLite", dependencies: ["Strata", "CSQLite"], path: "Drivers/SQLite/StrataSQLite",
            swiftSettings: checks),
        .target(name: "StrataTesting", dependencies: ["Strata"], path: "Sources/StrataTesting", swiftSettings: checks),
        .target(
            name: "StrataTools",
            dependencies: ["Strata", "StrataInMemory"],
            path: "Sources/StrataTools", swiftSettings: checks),
        .executableTarget(
            name: "strata",
            dependencies: ["StrataTools", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/strata"),
        .testTarget(name: "StrataTests", dependencies: ["Strata", "StrataInMemory", "StrataTesting"]),
        .testTarget(name: "StrataInMemoryTests", dependencies: ["Strata", "StrataInMemory", "StrataTesting"]),
        .testTarget(name: "StrataSQLiteTests", dependencies: ["StrataSQLite", "Strata"]),
        .testTarget(
            name: "StrataToolsTests", dependencies: ["StrataTools", "strata", "Strata", "StrataInMemory", "StrataTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
