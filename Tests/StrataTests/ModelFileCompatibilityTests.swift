import Foundation
import Strata
import Testing

// Every attribute and element Xcode writes loads; what Strata does not
// understand loads with a warning, and only what would make the model unsafe is refused.
// Spellings are those Xcode-written corpus files and third-party readers use (docs/models.md).

/// A model document around `body`; the body starts on line 3.
private func document(_ body: String, modelAttributes: String = "") -> String {
    """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0"\(modelAttributes)>
    \(body)
    </model>
    """
}

private func load(_ body: String, modelAttributes: String = "") throws -> ManagedObjectModel {
    try ManagedObjectModel(
        xmlData: Data(document(body, modelAttributes: modelAttributes).utf8), fileName: "Test.xcdatamodel/contents")
}

private func attributes(_ model: ManagedObjectModel, _ entity: String = "A") throws -> [String: AttributeDescription] {
    try #require(model.entity(named: entity)).attributesByName
}

@Suite("Model files: what Xcode writes loads")
struct ModelFileCompatibilityTests {
    // MARK: Dates

    @Test(
        "a Date range comes from minDateTimeInterval/maxDateTimeInterval; the display strings beside them are not parsed"
    )
    func dateRangeFromIntervals() throws {
        let model = try load(
            """
            <entity name="A">
                <attribute name="when" attributeType="Date" minValueString="12/4/2013" maxValueString="12/31/2013 11:59 PM" minDateTimeInterval="407808000" maxDateTimeInterval="410223540.5"/>
            </entity>
            """)
        let when = try #require(try attributes(model)["when"])
        #expect(when.validation.minimum == .date(Date(timeIntervalSinceReferenceDate: 407_808_000)))
        #expect(when.validation.maximum == .date(Date(timeIntervalSinceReferenceDate: 410_223_540.5)))
        #expect(model.loadWarnings.isEmpty, "\(model.loadWarnings)")
    }

    @Test("a Date limit written only as a display string is dropped with a warning naming the line")
    func dateDisplayStringAlone() throws {
        let model = try load(
            """
            <entity name="A">
                <attribute name="when" optional="YES" attributeType="Date" minValueString="12/4/2013"/>
            </entity>
            """)
        #expect(try attributes(model)["when"]?.validation.minimum == nil)
        let warning = try #require(model.loadWarnings.first)
        #expect(
            warning.line == 4 && warning.file == "Test.xcdatamodel/contents" && warning.element == "attribute A.when")
        #expect(warning.message.contains("minValueString") && warning.message.contains("12/4/2013"))
    }

    @Test("a Date default comes from defaultDateTimeInterval, negative and fractional values included")
    func dateDefaults() throws {
        let model = try load(
            """
            <entity name="A">
                <attribute name="a" attributeType="Date" defaultDateTimeInterval="-725882400"/>
                <attribute name="b" attributeType="Date" defaultDateTimeInterval="362848762.79173"/>
            </entity>
            """)
        let a = try attributes(model)
        #expect(a["a"]?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: -725_882_400)))
        #expect(a["b"]?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 362_848_762.79173)))
    }

    // MARK: Defaults in other spellings

    @Test("a Boolean default reads as NSString.boolValue: numbers count, zero is NO (YES, Y, T or a digit 1-9 is YES)")
    func booleanSpellings() throws {
        let cases: [(String, Bool)] = [
            ("YES", true), ("NO", false), ("0.0", false), ("0", false), ("1", true), ("1.0", true), ("5", true),
            ("true", true), ("false", false), ("yes", true), ("  Y", true), ("-1", true), ("0.5", false), ("007", true),
        ]
        let body = cases.enumerated().map { index, item in
            #"<attribute name="b\#(index)" attributeType="Boolean" defaultValueString="\#(item.0)"/>"#
        }.joined(separator: "\n")
        let model = try load("<entity name=\"A\">\n\(body)\n</entity>")
        let a = try attributes(model)
        for (index, item) in cases.enumerated() {
            #expect(a["b\(index)"]?.defaultValue == .bool(item.1), "\(item.0)")
        }
        #expect(model.loadWarnings.isEmpty, "\(model.loadWarnings)")
    }

    @Test(
        "integer defaults with a zero fraction load; a non-zero fraction is truncated as integerValue does, with a warning"
    )
    func integerSpellings() throws {
        let model = try load(
            """
            <entity name="A">
                <attribute name="a" attributeType="Integer 16" defaultValueString="3.0"/>
                <attribute name="b" attributeType="Integer 32" defaultValueString="-2.00"/>
                <attribute name="c" attributeType="Integer 64" defaultValueString="1e3"/>
                <attribute name="d" attributeType="Integer 32" defaultValueString="3.7"/>
            </entity>
            """)
        let a = try attributes(model)
        #expect(a["a"]?.defaultValue == .integer(3))
        #expect(a["b"]?.defaultValue == .integer(-2))
        #expect(a["c"]?.defaultValue == .integer(1000))
        #expect(a["d"]?.defaultValue == .integer(3))
        #expect(model.loadWarnings.count == 1)
        #expect(model.loadWarnings.first?.element == "attribute A.d" && model.loadWarnings.first?.line == 7)
    }

    @Test("an empty default on a non-string attribute means no default; a string keeps the empty string")
    func emptyDefaults() throws {
        let model = try load(
            """
            <entity name="A">
                <attribute name="id" optional="YES" attributeType="UUID" defaultValueString=""/>
                <attribute name="link" optional="YES" attributeType="URI" defaultValueString=""/>
                <attribute name="n" optional="YES" attributeType="Integer 32" defaultValueString=""/>
                <attribute name="d" optional="YES" attributeType="Double" defaultValueString=" "/>
                <attribute name="s" attributeType="String" defaultValueString=""/>
            </entity>
            """)
        let a = try attributes(model)
        #expect(a["id"]?.defaultValue == .null && a["link"]?.defaultValue == .null)
        #expect(a["n"]?.defaultValue == .null && a["d"]?.defaultValue == .null)
        #expect(a["s"]?.defaultValue == .string(""))
        #expect(model.loadWarnings.isEmpty, "\(model.loadWarnings)")
    }

    @Test("a default that does not read as its type is dropped with a warning naming file, line and attribute")
    func unreadableDefaults() throws {
        let model = try load(
            """
            <entity name="A">
                <attribute name="n" optional="YES" attributeType="Integer 32" defaultValueString="12abc"/>
                <attribute name="small" optional="YES" attributeType="Integer 16" defaultValueString="70000"/>
                <attribute name="id" optional="YES" attributeType="UUID" defaultValueString="not-a-uuid"/>
                <attribute name="blob" optional="YES" attributeType="Binary" defaultValueString="abc"/>
            </entity>
            """)
        let a = try attributes(model)
        for name in ["n", "small", "id", "blob"] { #expect(a[name]?.defaultValue == .null, "\(name)") }
        #expect(
            model.loadWarnings.map(\.element) == [
                "attribute A.n", "attribute A.small", "attribute A.id", "attribute A.blob",
            ])
        #expect(model.loadWarnings.map(\.line) == [4, 5, 6, 7])
        #expect(model.loadWarnings[0].message.contains("12abc"))
        #expect(model.loadWarnings[0].description.hasPrefix("Test.xcdatamodel/contents:4: <attribute A.n>: "))
    }

    @Test(
        "a fractional limit on an integer attribute is kept exactly; a limit on a type that takes none is dropped with a warning"
    )
    func limitsAfterTypeChanges() throws {
        let model = try load(
            """
            <entity name="A">
                <attribute name="n" attributeType="Integer 32" minValueString="0.5" maxValueString="10"/>
                <attribute name="flag" attributeType="Boolean" minValueString="0" maxValueString="1"/>
            </entity>
            """)
        let a = try attributes(model)
        #expect(a["n"]?.validation.minimum == .double(0.5) && a["n"]?.validation.maximum == .integer(10))
        #expect(a["flag"]?.validation.minimum == nil && a["flag"]?.validation.maximum == nil)
        #expect(model.loadWarnings.map(\.element) == ["attribute A.flag", "attribute A.flag"])
    }

    @Test("a limit that does not parse is still refused: ignoring it would accept values the model forbids")
    func unreadableLimitRefused() throws {
        #expect(throws: ModelError.self) {
            try load(#"<entity name="A"><attribute name="n" attributeType="Decimal" minValueString="1.2.3"/></entity>"#)
        }
    }

    // MARK: Everything else Xcode writes

    @Test("every attribute and element Xcode writes loads without a warning, and what Strata uses is kept")
    func everythingXcodeWrites() throws {
        let model = try load(
            """
            <entity name="A" representedClassName="AMO" syncable="YES" codeGenerationType="class" elementID="OldA" versionHashModifier="v2">
                <attribute name="count" optional="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES" preserveAfterDeletion="YES" spotlightIndexingEnabled="YES" allowsCloudEncryption="YES" indexed="YES" syncable="YES" elementID="total" versionHashModifier="m"/>
                <attribute name="id" optional="YES" attributeType="UUID" usesScalarValueType="NO"/>
                <attribute name="blob" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="upper" optional="YES" attributeType="String" derived="YES" derivationExpression="uppercase:(name)"/>
                <attribute name="name" optional="YES" attributeType="String" regularExpressionString="[a-z]*">
                    <userInfo><entry key="ak" value="av"/></userInfo>
                </attribute>
                <relationship name="bs" optional="YES" toMany="YES" deletionRule="No Action" destinationEntity="B" inverseName="a" inverseEntity="B" spotlightIndexingEnabled="YES" syncable="YES" elementID="oldBs" versionHashModifier="r">
                    <userInfo><entry key="rk" value="rv"/></userInfo>
                </relationship>
                <fetchedProperty name="named" optional="YES" syncable="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="B" predicateString="name == $FETCH_SOURCE.name"/>
                    <userInfo><entry key="fk" value="fv"/></userInfo>
                </fetchedProperty>
                <uniquenessConstraints><uniquenessConstraint><constraint value="name"/></uniquenessConstraint></uniquenessConstraints>
                <fetchIndex name="byName"><fetchIndexElement property="name" type="Binary" order="ascending"/></fetchIndex>
                <fetchIndex name="byExpression"><fetchIndexElement expression="count * 2" expressionType="Integer 64" type="Binary" order="descending"/></fetchIndex>
                <compoundIndexes><compoundIndex><index value="name"/><index value="count"/></compoundIndex></compoundIndexes>
                <userInfo><entry key="ek" value="ev"/></userInfo>
            </entity>
            <entity name="B" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="a" optional="YES" maxCount="1" deletionRule="Deny" destinationEntity="A" inverseName="bs" inverseEntity="A"/>
            </entity>
            <fetchRequest name="firstNamed" entity="A" predicateString="name == $NAME" fetchLimit="1" fetchBatchSize="100" resultType="4" includeSubentities="NO" includePropertyValues="YES" includesPendingChanges="NO" returnObjectsAsFaults="NO" returnDistinctResults="YES"/>
            <configuration name="Cloud" usedWithCloudKit="YES"><memberEntity name="A"/><memberEntity name="B"/></configuration>
            <elements>
                <element name="A" positionX="-63" positionY="-18" width="128" height="149"/>
                <element name="B" positionX="160" positionY="192" width="128" height="74"/>
            </elements>
            <userInfo><entry key="mk" value="mv"/></userInfo>
            """,
            modelAttributes:
                #" lastSavedToolsVersion="22225" systemVersion="23A344" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="2" usedWithCloudKit="YES" usedWithSwiftData="NO" iOSVersion="Automatic" macOSVersion="Automatic""#
        )
        #expect(model.loadWarnings.isEmpty, "\(model.loadWarnings)")
        let a = try #require(model.entity(named: "A"))
        #expect(a.renamingIdentifier == "OldA" && a.versionHashModifier == "v2" && a.userInfo == ["ek": "ev"])
        let count = try #require(a.attributesByName["count"])
        #expect(count.renamingIdentifier == "total" && count.versionHashModifier == "m" && count.isIndexed)
        #expect(a.attributesByName["blob"]?.allowsExternalBinaryDataStorage == true)
        #expect(
            a.attributesByName["upper"]?.userInfo[AttributeDescription.derivationExpressionUserInfoKey]
                == "uppercase:(name)")
        #expect(a.attributesByName["name"]?.userInfo == ["ak": "av"])
        let bs = try #require(a.relationshipsByName["bs"])
        #expect(bs.deleteRule == .noAction && bs.renamingIdentifier == "oldBs" && bs.userInfo == ["rk": "rv"])
        #expect(model.entity(named: "B")?.relationshipsByName["a"]?.deleteRule == .deny)
        #expect(a.fetchedProperties.first?.userInfo == ["fk": "fv"])
        #expect(a.indexes.map(\.name) == ["byName"])
        let template = try #require(model.fetchRequestTemplates["firstNamed"])
        #expect(template.fetchLimit == 1 && template.fetchBatchSize == 100)
        #expect(template.resultType == .count && !template.includesSubentities)
        let request = try FetchRequest(template: "firstNamed", in: model, substitutionVariables: ["NAME": "x"])
        #expect(
            request.fetchLimit == 1 && request.fetchBatchSize == 100,
            "a request from the template keeps its limit and batch size")
        #expect(model.configurations["Cloud"] == ["A", "B"])
        #expect(model.userInfo == ["mk": "mv"] && model.versionIdentifiers == ["2"])
    }

    @Test("renaming identifiers and version hash modifiers change what they should: the hash, not the names")
    func versionHashModifiers() throws {
        let plain = try load(#"<entity name="A"><attribute name="n" optional="YES" attributeType="String"/></entity>"#)
        let renamed = try load(
            #"<entity name="A" elementID="Old"><attribute name="n" optional="YES" attributeType="String" elementID="m"/></entity>"#
        )
        let modified = try load(
            #"<entity name="A"><attribute name="n" optional="YES" attributeType="String" versionHashModifier="2"/></entity>"#
        )
        #expect(renamed.versionHash == plain.versionHash)
        #expect(modified.versionHash != plain.versionHash)
    }

    // MARK: What Strata does not understand

    @Test("an unknown XML attribute or element loads with a warning naming file, line and element")
    func unknownThingsWarn() throws {
        let model = try load(
            """
            <entity name="A" futureEntityFlag="YES">
                <attribute name="n" optional="YES" attributeType="String" shinyNewOption="3"/>
                <futureThing name="x"/>
            </entity>
            <futureModelPart/>
            <composite name="Point" futureCompositeFlag="1"><attribute name="x" attributeType="Double"/></composite>
            """)
        let warnings = model.loadWarnings
        #expect(warnings.map(\.line) == [3, 4, 5, 7, 8], "\(warnings)")
        #expect(warnings[0].element == "entity A" && warnings[0].message.contains("futureEntityFlag"))
        #expect(warnings[1].element == "attribute A.n" && warnings[1].message.contains("shinyNewOption"))
        #expect(warnings[2].message.contains("<futureThing>"))
        #expect(warnings[3].message.contains("<futureModelPart>"))
        #expect(
            warnings[4].element == "composite Point" && warnings[4].message.contains("futureCompositeFlag"),
            "composites are read; their unknown parts warn")
        #expect(model.entity(named: "A")?.attributesByName["n"] != nil)
    }

    @Test("a model built in Swift has no load warnings, and registering classes keeps a file's warnings")
    func warningsCarryOver() throws {
        let built = try ManagedObjectModel(entities: [EntityDescription("A")])
        #expect(built.loadWarnings.isEmpty)
        let loaded = try load(#"<entity name="A" mystery="1"/>"#)
        #expect(loaded.loadWarnings.count == 1)
        #expect(try loaded.registering([:]).loadWarnings == loaded.loadWarnings)
    }

    @Test("an unknown delete rule is still refused, naming the file, the line and the rules Strata knows")
    func unknownDeleteRule() throws {
        do {
            _ = try load(
                #"<entity name="A"><relationship name="r" optional="YES" maxCount="1" deletionRule="Explode" destinationEntity="A"/></entity>"#
            )
            Issue.record("loading succeeded")
        } catch let error as ModelError {
            #expect(error.file == "Test.xcdatamodel/contents" && error.line == 3)
            #expect(error.message.contains("Explode") && error.message.contains("No Action"))
        }
    }
}
