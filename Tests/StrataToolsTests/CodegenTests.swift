import Foundation
import Strata
import StrataTesting
import StrataTools
import Testing

@Suite("strata codegen")
struct CodegenTests {
    @Test("one file per entity plus the class registry, with wrappers, accessors and fetch helpers")
    func files() throws {
        let files = CodeGenerator.generate(ConformanceModel.model)
        #expect(files.count == ConformanceModel.model.entities.count + 1)
        let byName = Dictionary(uniqueKeysWithValues: files.map { ($0.name, $0.contents) })
        let car = try #require(byName["Car.swift"])
        #expect(car.contains("public class Car: Vehicle {"))
        #expect(car.contains("override public class var entityName: String { \"Car\" }"))
        #expect(car.contains("@ManagedAttribute(\"seats\") public var seats: Int16?"))
        let sports = try #require(byName["SportsCar.swift"])
        #expect(sports.contains("public final class SportsCar: Car {"))
        let vehicle = try #require(byName["Vehicle.swift"])
        #expect(vehicle.contains("public class Vehicle: ManagedObject, GeneratedEntity {"))
        #expect(byName["ModelClasses.swift"]?.contains("public static func fetch(") == true)
        let playlist = try #require(byName["Playlist.swift"])
        #expect(playlist.contains("@ManagedOrderedToMany(\"tracks\") public var tracks: [Track]"))
        #expect(playlist.contains("public func addToTracks(_ object: Track)"))
        let employee = try #require(byName["Employee.swift"])
        #expect(employee.contains("@ManagedToOne(\"department\") public var department: Department?"))
        #expect(employee.contains("@ManagedAttribute(\"name\") public var name: String\n"))
        let item = try #require(byName["Item.swift"])
        #expect(item.contains("@ManagedToMany(\"tags\") public var tags: Set<Tag>"))
        #expect(item.contains("public var words: Any? {"))
        #expect(byName["ModelClasses.swift"]?.contains("\"SportsCar\": SportsCar.self,") == true)
    }

    @Test("names Swift or ManagedObject already use are suffixed; keywords are escaped")
    func reservedNames() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Note", properties: [.attribute("description", .string), .attribute("default", .boolean), .attribute("entity", .string)]),
        ])
        let source = try #require(CodeGenerator.generate(model).first { $0.name == "Note.swift" }?.contents)
        #expect(source.contains("@ManagedAttribute(\"description\") public var descriptionValue: String?"))
        #expect(source.contains("public var `default`: Bool?"))
        #expect(source.contains("public var entityValue: String?"))
    }

    @Test("the binary writes the files; a missing model exits 64")
    func binary() throws {
        let directory = try TemporaryDirectory()
        let output = directory.file("Generated")
        let result = try runStrata(["codegen", try writeDemoModel(in: directory), "--output", output.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output.path).sorted() == [
            "Department.swift", "Employee.swift", "ModelClasses.swift", "Project.swift",
        ])
        let missing = try runStrata(["codegen", directory.file("Nope.xcdatamodeld").path, "--output", output.path])
        #expect(missing.status == 64)
    }

    @Test("generated code for every corpus model compiles against the library", .needsCorpus, .timeLimit(.minutes(20)))
    func corpusBuild() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let directory = try TemporaryDirectory(prefix: "strata-codegen")
        var targets: [String] = []
        for (index, file) in try corpusModelFiles().enumerated() {
            let model = try ManagedObjectModel(contentsOf: file)
            let name = "Model\(index)"
            let folder = directory.url.appendingPathComponent("Sources/\(name)")
            let files = try CodeGenerator.write(model, to: folder)
            #expect(files.count == model.entities.count + 1)
            // Use the generated API the way an app would.
            let first = CodeGenerator.generate(model)[0].name.replacingOccurrences(of: ".swift", with: "")
            let use = """
                import Strata
                func use(_ context: ManagedObjectContext, _ model: ManagedObjectModel) throws -> Int {
                    _ = try ModelClasses.register(in: model)
                    return try \(first).fetch(in: context).count + \(first).count(in: context)
                }
                """
            try Data(use.utf8).write(to: folder.appendingPathComponent("Use.swift"))
            targets.append(name)
        }
        let identity = root.lastPathComponent.lowercased()
        let manifest = """
            // swift-tools-version:6.1
            import PackageDescription
            let package = Package(
                name: "Generated", platforms: [.macOS(.v15)],
                dependencies: [.package(path: "\(root.path)")],
                targets: [
            \(targets.map { "        .target(name: \"\($0)\", dependencies: [.product(name: \"Strata\", package: \"\(identity)\")])," }.joined(separator: "\n"))
                ])
            """
        try Data(manifest.utf8).write(to: directory.file("Package.swift"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "build", "--package-path", directory.url.path, "-j", "2"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output.suffix(4000))")
        #expect(!output.contains("warning:"), "\(output.suffix(4000))")
    }
}
