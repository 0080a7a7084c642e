import Foundation
import Strata
import Testing

@testable import StrataSQLite

@Suite("Model recovery from the corpus stores", .enabled(if: Corpus.isAvailable))
struct StoreModelRecoveryTests {
    /// Stores written before the model cache existed.
    static let storesWithoutCache: Set<String> = ["Recipes.sqlite", "test_data_ios_kik.sqlite"]

    @Test("every store's model is recovered, from the cache when there is one", arguments: Corpus.stores)
    func recovers(_ store: String) throws {
        let path = try Corpus.copyOfStore(store)
        let recovered = try StoreModelRecovery.recoverModel(fromStoreAt: path)
        #expect(recovered.source == (Self.storesWithoutCache.contains(store) ? .inferred : .modelCache))
        #expect(!recovered.model.entities.isEmpty)
    }

    /// Z_PRIMARYKEY keeps an entity's old name after a migration renamed it (SampleModel_V2:
    /// `ExpensiveSportCar` became `LuxuryCar`, whose renaming identifier is the old name).
    @Test("every entity of Z_PRIMARYKEY is in the model, with the same number and parent", arguments: Corpus.stores)
    func entitiesMatchPrimaryKeyTable(_ store: String) throws {
        let connection = try SQLiteConnection(path: try Corpus.copyOfStore(store))
        let model = try StoreModelRecovery.recoverModel(from: connection).model
        let entries = try PrimaryKeyEntry.read(from: connection).filter(\.isModelEntity)
        #expect(model.entities.count == entries.count)
        func entity(_ name: String) -> EntityDescription? {
            model.entity(named: name) ?? model.entities.first { $0.renamingIdentifier == name }
        }
        let byNumber = Dictionary(uniqueKeysWithValues: entries.map { ($0.entityNumber, $0.name) })
        for entry in entries {
            let found = try #require(entity(entry.name), "\(store): no entity \(entry.name)")
            #expect(found.entityNumber == entry.entityNumber, "\(store): \(entry.name)")
            let parent = byNumber[entry.superNumber].flatMap { entity($0)?.name }
            #expect(found.superentityName == parent, "\(store): parent of \(entry.name)")
        }
    }

    @Test("every stored attribute of a decoded model has a column in its root table", arguments: Corpus.stores)
    func attributesHaveColumns(_ store: String) throws {
        let connection = try SQLiteConnection(path: try Corpus.copyOfStore(store))
        let recovered = try StoreModelRecovery.recoverModel(from: connection)
        for entity in recovered.model.entities where entity.superentityName == nil {
            let table = "Z" + entity.name.uppercased()
            let columns = Set(
                try connection.rows("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap { $0[0].text })
            var hierarchy = recovered.model.entities.filter { $0.rootEntityName == entity.name }
            hierarchy.sort { $0.entityNumber < $1.entityNumber }
            for member in hierarchy {
                for attribute in member.ownProperties.compactMap(\.attribute) where !attribute.isTransient {
                    let column = "Z" + attribute.name.uppercased()
                    let found = columns.contains(column) || columns.contains { $0.hasPrefix(column) }
                    #expect(found, "\(store): \(member.name).\(attribute.name) has no column in \(table)")
                }
            }
        }
    }

    @Test("inferred models find relationships and many-to-many join tables")
    func inferredRelationships() throws {
        let recipes = try StoreModelRecovery.recoverModel(fromStoreAt: try Corpus.copyOfStore("Recipes.sqlite")).model
        let recipe = try #require(recipes.entity(named: "Recipe"))
        let image = try #require(recipe.relationshipsByName["IMAGE"])
        #expect(image.destinationEntityName == "Image")
        #expect(image.inverseName == "RECIPE")
        #expect(recipe.relationshipsByName["TYPE"]?.destinationEntityName == "RecipeType")
        #expect(recipe.attributesByName["NAME"]?.type == .string)
        #expect(recipe.attributesByName["THUMBNAILIMAGE"]?.type == .binaryData)
        #expect(recipes.entity(named: "Ingredient")?.attributesByName["DISPLAYORDER"]?.type == .integer64)
        #expect(recipes.entity(named: "Ingredient")?.relationshipsByName["RECIPE"]?.destinationEntityName == "Recipe")

        let kik = try StoreModelRecovery.recoverModel(fromStoreAt: try Corpus.copyOfStore("test_data_ios_kik.sqlite"))
            .model
        let chat = try #require(kik.entity(named: "KikChat"))
        let messages = try #require(chat.relationshipsByName["MESSAGES"])
        #expect(messages.isToMany && messages.destinationEntityName == "KikMessage" && messages.inverseName == "CHAT")
        let user = try #require(kik.entity(named: "KikUser"))
        #expect(user.relationshipsByName["MEMBERS"]?.inverseName == "MEMBERSINVERSE")
        #expect(user.relationshipsByName["BANS"]?.isToMany == true)
        #expect(kik.entity(named: "KikMessage")?.attributesByName["TIMESTAMP"]?.type == .date)
        #expect(kik.entity(named: "KikMessage")?.attributesByName["INTERNALID"]?.type == .integer64)
        #expect(chat.relationshipsByName["DRAFTMESSAGE"]?.destinationEntityName == "KikMessage")
    }
}

/// The layout Strata computes for a corpus store's recovered model, against the store's own tables.
@Suite("Layouts of the corpus stores", .enabled(if: Corpus.isAvailable))
struct CorpusLayoutTests {
    static func driver(_ store: String) throws -> SQLiteDriver {
        let path = try Corpus.copyOfStore(store)
        let recovered = try StoreModelRecovery.recoverModel(fromStoreAt: path)
        let request = StoreOpenRequest(
            url: URL(fileURLWithPath: path), model: recovered.model, configuration: nil,
            options: StoreOptions(isReadOnly: true))
        return try #require(try SQLiteDriverFactory().makeDriver(request) as? SQLiteDriver)
    }

    @Test(
        "every stored property of the recovered model has its column or join table in the store",
        arguments: Corpus.stores)
    func nothingMissing(_ store: String) throws {
        let driver = try Self.driver(store)
        defer { try? driver.close() }  // read-only; nothing to lose
        for layout in driver.layout.entities.values {
            for (slot, storage) in layout.slots.enumerated() {
                guard case .missing = storage else { continue }
                Issue.record("\(store): \(layout.entity.name).\(layout.entity.properties[slot].name) has no storage")
            }
        }
    }

    /// Notes' suffixes, checked against the rows: the first entity by `Z_ENT`
    /// declaring a name keeps the bare column, later ones get 1, 2, … in `Z_ENT` order.
    @Test("the suffixed columns of Notes belong to the entities whose rows fill them")
    func notesSuffixes() throws {
        let driver = try Self.driver("test_data_ios_NoteStore.sqlite")
        defer { try? driver.close() }  // read-only; nothing to lose
        func column(_ entity: String, _ property: String) -> String? {
            guard let described = driver.model.entity(named: entity),
                let layout = driver.layout.entity(described.entityNumber),
                let slot = described.index(ofProperty: property)
            else { return nil }
            switch layout.slots[slot] {
            case .attribute(let column, _, _), .toOne(let column, _, _, _, _): return column
            default: return nil
            }
        }
        #expect(column("ICAttachment", "title") == "ZTITLE")
        #expect(column("ICNote", "title") == "ZTITLE1")
        #expect(column("ICFolder", "title") == "ZTITLE2")
        #expect(column("ICAccountData", "account") == "ZACCOUNT")
        #expect(column("ICDeviceMigrationState", "account") == "ZACCOUNT1")
        #expect(column("ICNote", "account") == "ZACCOUNT4")
        #expect(column("ICFolder", "account") == "ZACCOUNT5")
        #expect(column("ICNote", "creationDate") == "ZCREATIONDATE3")
        // Seven notes and three folders have titles (SELECT Z_ENT, COUNT(*) … WHERE ZTITLE1/ZTITLE2 IS NOT NULL).
        for (entity, titled) in [("ICNote", 7), ("ICFolder", 3)] {
            let described = try #require(driver.model.entity(named: entity))
            let slot = try #require(described.index(ofProperty: "title"))
            var fetch = StoreFetch(entity: described)
            fetch.includesSubentities = false
            let rows = try driver.fetch(fetch).rows
            #expect(
                rows.filter { if case .null = $0.values[slot] { false } else { true } }.count == titled, "\(entity)")
        }
    }
}
