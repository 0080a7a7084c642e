import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// Core Data's version hashes computed by Strata from each corpus store's model cache equal the
/// hashes Apple's framework stored in the store's metadata: 55 entity hashes over 7 stores, the
/// digest of each, and the checksum where a store has one.
@Suite("Core Data's version hashes of the corpus stores", .enabled(if: Corpus.isAvailable))
struct CoreDataVersionHashTests {
    static let storesWithModelCache = [
        "SampleModel_V1.sqlite", "SampleModel_V2.sqlite", "SampleModel2_V1.sqlite", "SampleModel3_V1.sqlite",
        "test_data_ios_NoteStore.sqlite", "test_data_ios_Accounts3.sqlite", "test_data_macos_knowledgec-10.13.db",
    ]

    @Test(
        "the hashes of the decoded model cache equal the stored NSStoreModelVersionHashes, digest and checksum",
        arguments: storesWithModelCache)
    func hashesMatch(_ name: String) throws {
        let url = URL(fileURLWithPath: try Corpus.copyOfStore(name))
        let recovered = try #require(try StoreType.sqlite.factory.recoverModel(at: url, options: StoreOptions()))
        #expect(recovered.source == .modelCache)
        let metadata = try #require(
            try StoreType.sqlite.factory.metadata(at: url, options: StoreOptions(isReadOnly: true)))
        guard case .dictionary(let stored)? = metadata.values[ModelVersionHashes.entityHashesKey] else {
            Issue.record("\(name) has no NSStoreModelVersionHashes")
            return
        }
        let computed = recovered.model.coreDataVersionHashes
        #expect(Set(stored.keys) == Set(computed.entities.keys))
        var differing: [String] = []
        for (entity, value) in stored where value.dataValue != computed.entities[entity] { differing.append(entity) }
        #expect(differing.isEmpty, "\(name): entities whose hash differs: \(differing.sorted())")
        if let digest = metadata.values[ModelVersionHashes.digestKey]?.stringValue {
            #expect(digest == computed.digest)
        }
        if let checksum = metadata.values[ModelVersionHashes.checksumKey]?.stringValue {
            #expect(checksum == computed.checksum)
        }
        #expect(recovered.model.isConfiguration(nil, compatibleWithStoreMetadata: metadata))
    }

    @Test("all 55 entity hashes of the seven stores with a model cache are reproduced")
    func allFiftyFive() throws {
        var total = 0
        var matched = 0
        for name in Self.storesWithModelCache {
            let url = URL(fileURLWithPath: try Corpus.copyOfStore(name))
            let model = try #require(try StoreType.sqlite.factory.recoverModel(at: url, options: StoreOptions())).model
            let metadata = try #require(
                try StoreType.sqlite.factory.metadata(at: url, options: StoreOptions(isReadOnly: true)))
            guard case .dictionary(let stored)? = metadata.values[ModelVersionHashes.entityHashesKey] else { continue }
            let computed = model.coreDataVersionHashes.entities
            total += stored.count
            matched += stored.filter { $0.value.dataValue == computed[$0.key] }.count
        }
        #expect(total == 55)
        #expect(matched == 55)
    }

    @Test("SampleModel_V2's model is not compatible with SampleModel_V1's metadata, and the other way round")
    func versionsAreDistinguished() throws {
        let v1 = URL(fileURLWithPath: try Corpus.copyOfStore("SampleModel_V1.sqlite"))
        let v2 = URL(fileURLWithPath: try Corpus.copyOfStore("SampleModel_V2.sqlite"))
        let m1 = try #require(try StoreType.sqlite.factory.recoverModel(at: v1, options: StoreOptions())).model
        let m2 = try #require(try StoreType.sqlite.factory.recoverModel(at: v2, options: StoreOptions())).model
        let d1 = try #require(try StoreType.sqlite.factory.metadata(at: v1, options: StoreOptions(isReadOnly: true)))
        let d2 = try #require(try StoreType.sqlite.factory.metadata(at: v2, options: StoreOptions(isReadOnly: true)))
        #expect(!m2.isConfiguration(nil, compatibleWithStoreMetadata: d1))
        #expect(!m1.isConfiguration(nil, compatibleWithStoreMetadata: d2))
        #expect(m1.isConfiguration(nil, compatibleWithStoreMetadata: d1))
    }
}
