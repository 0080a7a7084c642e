import Foundation
import Strata
import StrataInMemory
import Testing

final class Author: ManagedObject {
    @ManagedAttribute("name") var name: String
    @ManagedAttribute("born") var born: Int16
    @ManagedAttribute("rating") var rating: Double?
    @ManagedToMany("books") var books: Set<Book>
}

final class Book: ManagedObject {
    @ManagedAttribute("title") var title: String?
    @ManagedAttribute("published") var published: Date?
    @ManagedToOne("author") var author: Author?
    @ManagedOrderedToMany("chapters") var chapters: [Chapter]
}

final class Chapter: ManagedObject {
    @ManagedAttribute("heading") var heading: String
    @ManagedToOne("book") var book: Book?
}

@Suite("Typed subclasses with property wrappers")
struct TypedSubclassTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Author",
                properties: [
                    .attribute("name", .string), .attribute("born", .integer16), .attribute("rating", .double),
                    .toMany("books", "Book", inverse: "author"),
                ], managedObjectClass: Author.self),
            EntityDescription(
                "Book",
                properties: [
                    .attribute("title", .string), .attribute("published", .date),
                    .toOne("author", "Author", inverse: "books"),
                    .toMany("chapters", "Chapter", inverse: "book", ordered: true),
                ],
                managedObjectClass: Book.self),
            EntityDescription(
                "Chapter", properties: [.attribute("heading", .string), .toOne("book", "Book", inverse: "chapters")],
                managedObjectClass: Chapter.self),
        ])
    }

    @Test("wrapped properties read and write the same storage as key-value access")
    func sameStorage() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let author = Author(context: context)
        author.name = "Le Guin"
        author.born = 1929
        #expect(author["name"] as? String == "Le Guin")
        #expect(author.rating == nil)
        author["rating"] = 4.5
        #expect(author.rating == 4.5)
        let book = try context.insert(Book.self)
        book.title = "The Dispossessed"
        book.author = author
        #expect(author.books == [book])
        let chapters = (1...3).map { index -> Chapter in
            let chapter = Chapter(context: context)
            chapter.heading = "Chapter \(index)"
            return chapter
        }
        book.chapters = chapters.reversed()
        #expect(chapters[0].book === book)
        try context.save()

        let reader = ManagedObjectContext(coordinator: coordinator)
        let fetched = try reader.fetch(FetchRequest(entityName: "Book"), as: Book.self)
        #expect(fetched.count == 1)
        #expect(fetched[0].author?.name == "Le Guin")
        #expect(fetched[0].author?.born == 1929)
        #expect(fetched[0].chapters.map(\.heading) == ["Chapter 3", "Chapter 2", "Chapter 1"])
    }

    @Test("a non-optional scalar reads nil as zero and an empty string as empty")
    func nilScalars() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(type: .inMemory)
        let author = Author(context: ManagedObjectContext(coordinator: coordinator))
        #expect(author.born == 0)
        #expect(author.name == "")
    }
}
