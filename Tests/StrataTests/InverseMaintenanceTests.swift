import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

@Suite("Inverse maintenance")
struct InverseMaintenanceTests {
    let stack: TestStack
    init() throws { stack = try TestStack() }

    func insert(_ entity: String, _ name: String, key: String = "name") throws -> ManagedObject {
        let object = try stack.context.insertNewObject(forEntityName: entity)
        object[key] = name
        return object
    }

    @Test("setting a to-one adds the object to the inverse to-many")
    func toOneSetsToMany() throws {
        let d = try insert("Department", "D")
        let e = try insert("Employee", "E")
        e["department"] = d
        #expect(d.objects(forKey: "employees") == [e])
    }

    @Test("moving an object to a new owner removes it from the old owner")
    func moveBetweenOwners() throws {
        let d1 = try insert("Department", "D1")
        let d2 = try insert("Department", "D2")
        let e = try insert("Employee", "E")
        d1.addObject(e, toRelationship: "employees")
        d2.addObject(e, toRelationship: "employees")
        #expect(d1.objects(forKey: "employees").isEmpty)
        #expect(d2.objects(forKey: "employees") == [e])
        #expect(e.object(forKey: "department") === d2)
    }

    @Test("one-to-one: taking a partner detaches both previous partners")
    func oneToOne() throws {
        let d1 = try insert("Department", "D1")
        let d2 = try insert("Department", "D2")
        let a = try insert("Employee", "A")
        let b = try insert("Employee", "B")
        d1["manager"] = a
        d2["manager"] = b
        d1["manager"] = b
        #expect(a.object(forKey: "managedDepartment") == nil)
        #expect(b.object(forKey: "managedDepartment") === d1)
        #expect(d2.object(forKey: "manager") == nil)
    }

    @Test("clearing a to-one removes the object from the inverse")
    func clearToOne() throws {
        let d = try insert("Department", "D")
        let e = try insert("Employee", "E")
        e["department"] = d
        e["department"] = nil
        #expect(d.objects(forKey: "employees").isEmpty)
    }

    @Test("replacing a to-many set updates every member's inverse")
    func replaceToMany() throws {
        let d = try insert("Department", "D")
        let a = try insert("Employee", "A")
        let b = try insert("Employee", "B")
        let c = try insert("Employee", "C")
        d.setValue(Set([a, b]), forKey: "employees")
        d.setValue(Set([b, c]), forKey: "employees")
        #expect(a.object(forKey: "department") == nil)
        #expect(b.object(forKey: "department") === d)
        #expect(c.object(forKey: "department") === d)
    }

    @Test("many-to-many: adding and removing keeps both sides")
    func manyToMany() throws {
        let item = try stack.context.insertNewObject(forEntityName: "Item")
        let red = try insert("Tag", "red")
        let blue = try insert("Tag", "blue")
        item.setValue(Set([red, blue]), forKey: "tags")
        #expect(red.objects(forKey: "items") == [item])
        item.removeObject(red, fromRelationship: "tags")
        #expect(red.objects(forKey: "items").isEmpty)
        #expect(blue.objects(forKey: "items") == [item])
    }

    @Test("ordered to-many keeps the given order and the inverse stays unordered")
    func ordered() throws {
        let p = try insert("Playlist", "P", key: "title")
        let tracks = try (0..<4).map { try insert("Track", "T\($0)", key: "title") }
        p.setValue([tracks[2], tracks[0], tracks[3]], forKey: "tracks")
        #expect(p.objects(forKey: "tracks") == [tracks[2], tracks[0], tracks[3]])
        p.addObject(tracks[1], toRelationship: "tracks")
        #expect(p.objects(forKey: "tracks").last === tracks[1])
        #expect(tracks[1].objects(forKey: "playlists") == [p])
        #expect((p.value(forKey: "tracks") as? [ManagedObject])?.count == 4)
    }

    @Test("a delete with the nullify rule removes the object from inverses at save")
    func nullifyOnDelete() throws {
        let d = try insert("Department", "D")
        let e = try insert("Employee", "E")
        e["department"] = d
        try stack.context.save()
        stack.context.delete(e)
        stack.context.processPendingChanges()
        #expect(d.objects(forKey: "employees").isEmpty)
        try stack.context.save()
        let again = try stack.fetch("Department", in: stack.newContext())[0]
        #expect(again.objects(forKey: "employees").isEmpty)
    }
}
