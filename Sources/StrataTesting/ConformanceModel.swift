import Foundation
import Strata

/// The model every driver is tested with: every attribute type, every relationship kind,
/// inheritance three levels deep, a unique constraint and delete rules of each kind.
public enum ConformanceModel {
    /// The model.
    public static let model: ManagedObjectModel = {
        let item = EntityDescription(
            "Item",
            properties: [
                .attribute("int16", .integer16), .attribute("int32", .integer32), .attribute("int64", .integer64),
                .attribute("decimal", .decimal), .attribute("double", .double), .attribute("float", .float),
                .attribute("string", .string), .attribute("bool", .boolean), .attribute("date", .date),
                .attribute("binary", .binaryData), .attribute("uuid", .uuid), .attribute("uri", .uri),
                .attribute("words", .transformable, valueTransformerName: JSONStringArrayTransformer.name),
                .attribute("scratch", .string, isTransient: true),
                .toMany("tags", "Tag", inverse: "items"),
            ])
        let tag = EntityDescription(
            "Tag",
            properties: [.attribute("name", .string, isOptional: false), .toMany("items", "Item", inverse: "tags")],
            uniquenessConstraints: [["name"]])
        let department = EntityDescription(
            "Department",
            properties: [
                .attribute("name", .string, isOptional: false), .attribute("budget", .double, defaultValue: .double(0)),
                .toMany("employees", "Employee", inverse: "department", deleteRule: .cascade),
                .toOne("manager", "Employee", inverse: "managedDepartment"),
            ])
        let employee = EntityDescription(
            "Employee",
            properties: [
                .attribute("name", .string, isOptional: false), .attribute("age", .integer16),
                .attribute("salary", .double), .attribute("email", .string),
                .toOne("department", "Department", inverse: "employees", deleteRule: .nullify),
                .toOne("managedDepartment", "Department", inverse: "manager"),
                .toOne("mentor", "Employee", inverse: "mentees"),
                .toMany("mentees", "Employee", inverse: "mentor", deleteRule: .deny),
            ])
        let vehicle = EntityDescription(
            "Vehicle", isAbstract: true,
            properties: [.attribute("name", .string), .attribute("wheels", .integer16, defaultValue: .integer(4))])
        let car = EntityDescription("Car", parent: "Vehicle", properties: [.attribute("seats", .integer16)])
        let sportsCar = EntityDescription("SportsCar", parent: "Car", properties: [.attribute("topSpeed", .double)])
        let truck = EntityDescription("Truck", parent: "Vehicle", properties: [.attribute("load", .double)])
        let playlist = EntityDescription(
            "Playlist",
            properties: [
                .attribute("title", .string), .toMany("tracks", "Track", inverse: "playlists", ordered: true),
                .toMany("chapters", "Chapter", inverse: "playlist", ordered: true, deleteRule: .cascade),
            ])
        let track = EntityDescription(
            "Track", properties: [.attribute("title", .string), .toMany("playlists", "Playlist", inverse: "tracks")])
        let chapter = EntityDescription(
            "Chapter", properties: [.attribute("title", .string), .toOne("playlist", "Playlist", inverse: "chapters")])
        let node = EntityDescription(
            "Node",
            properties: [
                .attribute("label", .string), .toOne("parent", "Node", inverse: "children"),
                .toMany("children", "Node", inverse: "parent", deleteRule: .cascade),
            ])
        // The model above is fixed and valid; building it cannot fail.
        return try! ManagedObjectModel(
            entities: [
                item, tag, department, employee, vehicle, car, sportsCar, truck, playlist, track, chapter, node,
            ],
            configurations: ["Staff": ["Department", "Employee"], "Media": ["Playlist", "Track", "Chapter"]])
    }()

    /// Names used by the seeded employees, with unicode and case variety for string predicates.
    public static let employeeNames = [
        "Ann", "bob", "Émile", "Zoë", "ann-marie", "Chloé", "Dan", "eve", "Frank", "Gus", "Ünal", "Hélène",
    ]

    /// Seeds departments, employees (with mentors), vehicles, tags, items, playlists and nodes;
    /// deterministic, so every driver holds the same data.
    public static func seed(_ context: ManagedObjectContext) throws {
        let reference = Date(timeIntervalSinceReferenceDate: 700_000_000)
        var departments: [ManagedObject] = []
        for (index, name) in ["Research", "Sales", "support", "Éditions"].enumerated() {
            let d = try context.insertNewObject(forEntityName: "Department")
            d["name"] = name
            d["budget"] = Double(index) * 1_500.5
            departments.append(d)
        }
        var employees: [ManagedObject] = []
        for (index, name) in employeeNames.enumerated() {
            let e = try context.insertNewObject(forEntityName: "Employee")
            e["name"] = name
            e["age"] = 20 + (index * 7) % 35
            e["salary"] = index % 4 == 3 ? nil : 30_000 + Double(index) * 2_750.25
            e["email"] = index % 3 == 0 ? nil : "\(name.lowercased())@example.com"
            if index < 11 { e["department"] = departments[index % 3] }
            if index > 2 { e["mentor"] = employees[index % 3] }
            employees.append(e)
        }
        departments[0]["manager"] = employees[0]
        departments[1]["manager"] = employees[4]
        var tags: [ManagedObject] = []
        for name in ["red", "Green", "blue", "ÉCLAT"] {
            let t = try context.insertNewObject(forEntityName: "Tag")
            t["name"] = name
            tags.append(t)
        }
        for index in 0..<10 {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["int16"] = Int16(index * 3 - 10)
            item["int32"] = index % 4 == 0 ? nil : Int32(index * 1_000)
            item["int64"] = Int64(index) * 10_000_000_000
            item["decimal"] = Decimal(string: "\(index).25")
            item["double"] = Double(index) / 3
            item["float"] = Float(index) * 1.5
            item["string"] =
                index % 5 == 4 ? nil : ["alpha", "Beta", "gamma*", "délta", "Alphabet"][index % 5] + "\(index)"
            item["bool"] = index % 2 == 0
            item["date"] = reference.addingTimeInterval(Double(index) * 86_400.5)
            item["binary"] = Data((0..<index).map { UInt8($0) })
            item["uuid"] = UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", index))
            item["uri"] = URL(string: "https://example.com/items/\(index)")
            item["words"] = ["w\(index)", "x"]
            item.setValue(Set(tags.enumerated().filter { (index + $0.offset) % 3 == 0 }.map(\.element)), forKey: "tags")
        }
        let names = ["Alpha", "beta", "Gamma", "delta", "Epsilon"]
        for (index, name) in names.enumerated() {
            let kind = ["Car", "SportsCar", "Truck", "Car", "SportsCar"][index]
            let v = try context.insertNewObject(forEntityName: kind)
            v["name"] = name
            if kind == "Truck" {
                v["wheels"] = 6
                v["load"] = 12.5
            }
            if kind != "Truck" { v["seats"] = 2 + index }
            if kind == "SportsCar" { v["topSpeed"] = 250.0 + Double(index) }
        }
        var tracks: [ManagedObject] = []
        for index in 0..<6 {
            let t = try context.insertNewObject(forEntityName: "Track")
            t["title"] = "Track \(index)"
            tracks.append(t)
        }
        let playlist = try context.insertNewObject(forEntityName: "Playlist")
        playlist["title"] = "Mix"
        playlist.setValue([tracks[3], tracks[0], tracks[5], tracks[1]], forKey: "tracks")
        var chapters: [ManagedObject] = []
        for index in 0..<3 {
            let c = try context.insertNewObject(forEntityName: "Chapter")
            c["title"] = "Chapter \(index)"
            chapters.append(c)
        }
        playlist.setValue([chapters[2], chapters[0], chapters[1]], forKey: "chapters")
        let root = try context.insertNewObject(forEntityName: "Node")
        root["label"] = "root"
        for index in 0..<3 {
            let child = try context.insertNewObject(forEntityName: "Node")
            child["label"] = "child \(index)"
            child["parent"] = root
            let grandchild = try context.insertNewObject(forEntityName: "Node")
            grandchild["label"] = "grandchild \(index)"
            grandchild["parent"] = child
        }
        try context.save()
    }
}
