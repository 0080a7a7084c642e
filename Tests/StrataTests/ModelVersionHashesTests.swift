import Foundation
import Strata
import Testing

extension Trait where Self == ConditionTrait {
    /// Runs a test only when `STRATA_CORPUS` names the corpus folder.
    fileprivate static var needsCorpus: Self {
        .enabled(if: ProcessInfo.processInfo.environment["STRATA_CORPUS"] != nil, "STRATA_CORPUS is not set")
    }
}

private func corpusModel(_ name: String) throws -> ManagedObjectModel {
    let folder = try #require(ProcessInfo.processInfo.environment["STRATA_CORPUS"])
    return try ManagedObjectModel(
        contentsOf: URL(fileURLWithPath: folder).appendingPathComponent("models/\(name).xcdatamodel.xml"))
}

private func base64(_ hashes: ModelVersionHashes) -> [String: String] {
    hashes.entities.mapValues { $0.base64EncodedString() }
}

@Suite("Core Data's version hashes")
struct ModelVersionHashesTests {
    @Test("SHA-512 gives FIPS 180-4's digests for the empty message, 'abc' and a two-block message")
    func sha512Vectors() {
        #expect(
            SHA512Digest.hash(Array("abc".utf8)).hexString
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        )
        #expect(
            SHA512Digest.hash([UInt8]()).hexString
                == "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        )
        let long = Array(
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
                .utf8)
        #expect(
            SHA512Digest.hash(long).hexString
                == "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"
        )
    }

    @Test(
        "SampleModel's Xcode file gives the hashes and digest Core Data stored in SampleModel_V1.sqlite", .needsCorpus)
    func sampleModelV1() throws {
        let hashes = try corpusModel("alemar11__CoreDataPlus__SampleModel").coreDataVersionHashes
        #expect(
            base64(hashes) == [
                "Car": "nlVVKQchWCING6zS+Ao9rUkZ90oyqovp7iKmp7QSbI8=",
                "ExpensiveSportCar": "PcfjKxvkW1pMeVrJrz4dEKpyItPGmugFu+tECL3rpIA=",
                "Person": "FkJoVRtFEIrnY6orph/zLTLTIyOFCYfD4hYHyNpEtys=",
                "SportCar": "UU7BkHpWgpn5+2hREGUWE28HVfRfpTqCOg5NRAE9UxM=",
            ])
        #expect(
            hashes.digest
                == "fACvwxty0QWritKFX3/LTtXZvI64UnFcRtP6qcjW1Yl0owr+rH+SpCvzy/uDYRpknMXbgacd3srn9wmE2KkL8Q==")
    }

    @Test(
        "SampleModel2's Xcode file gives the hashes and digest Core Data stored in SampleModel_V2.sqlite", .needsCorpus)
    func sampleModelV2() throws {
        let hashes = try corpusModel("alemar11__CoreDataPlus__SampleModel2").coreDataVersionHashes
        #expect(
            base64(hashes) == [
                "Car": "flA++/S2PNk/9ynpZ14hxjxlJi2FqYifWaJECvZIG5M=",
                "LuxuryCar": "qHPFWQAQ5Oo/e9+EZ4bfv1ywlVJrhqoN4sVpxLsSGIY=",
                "Person": "BnrmLhvRAUy2VZ2ZCAOuWPNU3Rt7p7dyKjYcDDnyE04=",
                "SportCar": "cipVtbvNUddIdqTdj497veV93GHLZaV37FsPvpeNe4w=",
            ])
        #expect(
            hashes.digest
                == "gA/GyOCh8sMDKPJBWGZpv2usq+rU1r4MjgwPc9tbafDh4RTvoBOjSnmanNvWopksmy/criJNqsnPcAZkTmEa7Q==")
    }

    @Test(
        "the hash ignores defaults, delete rules, indexes, renaming identifiers and user info, and follows optionality, types and parents"
    )
    func whatTheHashFollows() throws {
        func model(
            optional: Bool = true, type: AttributeType = .string, defaultValue: StoreValue = .null,
            deleteRule: DeleteRule = .nullify, renaming: String? = nil, parent: Bool = false
        ) throws -> ModelVersionHashes {
            var name = AttributeDescription("name", type, isOptional: optional, defaultValue: defaultValue)
            name.renamingIdentifier = renaming
            var entities = [
                EntityDescription(
                    "Person", parent: parent ? "Base" : nil,
                    properties: [.attribute(name), .toMany("pets", "Pet", inverse: "owner", deleteRule: deleteRule)],
                    indexes: renaming == nil ? [] : [FetchIndexDescription(name: "byName", elements: [.init("name")])],
                    userInfo: renaming == nil ? [:] : ["k": "v"]),
                EntityDescription("Pet", properties: [.toOne("owner", "Person", inverse: "pets")]),
            ]
            if parent { entities.append(EntityDescription("Base")) }
            return try ManagedObjectModel(entities: entities).coreDataVersionHashes
        }
        let base = try model()
        #expect(try model(defaultValue: .string("x")).entities == base.entities)
        #expect(try model(deleteRule: .cascade).entities == base.entities)
        #expect(try model(renaming: "fullName").entities == base.entities)
        #expect(try model(optional: false).entities["Person"] != base.entities["Person"])
        #expect(try model(optional: false).entities["Pet"] == base.entities["Pet"])
        #expect(try model(type: .integer32).entities["Person"] != base.entities["Person"])
        #expect(try model(parent: true).entities["Person"] != base.entities["Person"])
        #expect(base.checksum.count == 44)  // base64 of 32 bytes
    }
}
