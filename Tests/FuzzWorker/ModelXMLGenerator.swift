import Foundation
import StrataTesting

/// Xcode model `contents` files: a valid sample, random models (entities with attributes of every
/// type, relationships with and without inverses, parents, configurations, fetch requests, with
/// odd values), and structured damage to one XML attribute of a valid file.
enum ModelXMLGenerator {
    static let attributeTypes = [
        "Integer 16", "Integer 32", "Integer 64", "Decimal", "Double", "Float", "String", "Boolean", "Date", "Binary",
        "UUID", "URI", "Transformable", "Undefined", "ObjectID", "Nope", "",
    ]

    static var sample: [UInt8] {
        Array(
            #"""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
                <entity name="Department" representedClassName="Department" syncable="YES">
                    <attribute name="name" attributeType="String" minValueString="1" maxValueString="40" regularExpressionString="[A-Z].*"/>
                    <attribute name="budget" optional="YES" attributeType="Decimal" defaultValueString="0.0"/>
                    <relationship name="employees" optional="YES" toMany="YES" deletionRule="Cascade" ordered="YES" destinationEntity="Employee" inverseName="department" inverseEntity="Employee"/>
                    <fetchIndex name="byName"><fetchIndexElement property="name" type="Binary" order="ascending"/></fetchIndex>
                    <uniquenessConstraints><uniquenessConstraint><constraint value="name"/></uniquenessConstraint></uniquenessConstraints>
                </entity>
                <entity name="Person" isAbstract="YES" syncable="YES">
                    <attribute name="age" optional="YES" attributeType="Integer 16" minValueString="0" maxValueString="150" defaultValueString="18" usesScalarValueType="YES"/>
                    <attribute name="born" optional="YES" attributeType="Date"/>
                    <attribute name="tags" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData"/>
                    <userInfo><entry key="k" value="v"/></userInfo>
                </entity>
                <entity name="Employee" parentEntity="Person" syncable="YES">
                    <attribute name="id" optional="YES" attributeType="UUID" usesScalarValueType="NO"/>
                    <relationship name="department" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Department" inverseName="employees" inverseEntity="Department"/>
                    <fetchedProperty name="peers" optional="YES"><fetchRequest name="fetchedPropertyFetchRequest" entity="Employee" predicateString="department == $FETCH_SOURCE.department"/></fetchedProperty>
                </entity>
                <fetchRequest name="Adults" entity="Employee" predicateString="age &gt;= $AGE"/>
                <configuration name="Staff"><memberEntity name="Department"/><memberEntity name="Employee"/></configuration>
            </model>
            """#.utf8)
    }

    /// One XML attribute value of the file replaced.
    static func structured(_ bytes: [UInt8], _ random: inout SeededGenerator) -> (bytes: [UInt8], what: String)? {
        let keys = [
            "name", "attributeType", "parentEntity", "destinationEntity", "inverseName", "inverseEntity", "maxCount",
            "minCount", "minValueString", "maxValueString", "defaultValueString", "toMany", "ordered", "optional",
            "deletionRule", "predicateString", "entity", "value", "property", "order", "type", "isAbstract",
            "renamingIdentifier", "elementID", "versionHashModifier", "regularExpressionString", "transient",
        ]
        let key = keys[Int.random(in: 0..<keys.count, using: &random)]
        let ranges = XMLDamage.fields(bytes, open: " \(key)=\"", close: "\"")
        guard !ranges.isEmpty else { return nil }
        let range = ranges[Int.random(in: 0..<ranges.count, using: &random)]
        let value = odd(&random)
        var edited = bytes
        edited.replaceSubrange(range, with: Array(value.utf8))
        return (
            edited, "\(key)=\"\(String(decoding: bytes[range], as: UTF8.self).prefix(30))\" → \"\(value.prefix(30))\""
        )
    }

    static func odd(_ random: inout SeededGenerator) -> String {
        [
            "", "YES", "NO", "Department", "Employee", "Person", "employees", "department", "-1", "0",
            "\(ByteDamage.interestingInteger(using: &random))", "1e400", "nan", "Cascade", "Deny", "Nope", "&amp;",
            "name == $X", "((((", "SUBQUERY(", String(repeating: "x", count: 3_000), "Integer 64", "String", "Date",
        ].randomElement(using: &random)!  // non-empty literal
    }

    /// A random model: a few entities, each with attributes and relationships chosen at random,
    /// parents possibly forming cycles, inverses possibly pointing nowhere.
    static func generate(_ random: inout SeededGenerator) -> (bytes: [UInt8], what: String) {
        let count = Int.random(in: 1...6, using: &random)
        let names = (0..<count).map { "E\($0)" }
        var text =
            #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><model type="com.apple.IDECoreDataModeler.DataModel">"#
        for (index, name) in names.enumerated() {
            var entity = "<entity name=\"\(name)\""
            if Int.random(in: 0..<3, using: &random) == 0 {
                entity += " parentEntity=\"\(names.randomElement(using: &random)!)\""
            }  // names is not empty
            if Int.random(in: 0..<4, using: &random) == 0 { entity += " isAbstract=\"YES\"" }
            entity += ">"
            for a in 0..<Int.random(in: 0...5, using: &random) {
                let type = attributeTypes.randomElement(using: &random)!  // non-empty literal
                entity += "<attribute name=\"a\(a)\" attributeType=\"\(type)\""
                if Bool.random(using: &random) { entity += " optional=\"YES\"" }
                if Int.random(in: 0..<3, using: &random) == 0 { entity += " defaultValueString=\"\(odd(&random))\"" }
                if Int.random(in: 0..<4, using: &random) == 0 {
                    entity += " minValueString=\"\(odd(&random))\" maxValueString=\"\(odd(&random))\""
                }
                entity += "/>"
            }
            for r in 0..<Int.random(in: 0...3, using: &random) {
                let destination = names.randomElement(using: &random)!  // names is not empty
                entity += "<relationship name=\"r\(index)_\(r)\" destinationEntity=\"\(destination)\""
                if Bool.random(using: &random) { entity += " toMany=\"YES\"" } else { entity += " maxCount=\"1\"" }
                if Bool.random(using: &random) {
                    entity +=
                        " inverseName=\"r\(names.firstIndex(of: destination) ?? 0)_\(Int.random(in: 0...2, using: &random))\" inverseEntity=\"\(destination)\""
                }
                if Int.random(in: 0..<4, using: &random) == 0 {
                    entity += " minCount=\"\(odd(&random))\" maxCount=\"\(odd(&random))\""
                }
                // non-empty literal
                entity +=
                    " deletionRule=\"\(["Nullify", "Cascade", "Deny", "No Action", "Nope"].randomElement(using: &random)!)\"/>"
            }
            if Int.random(in: 0..<5, using: &random) == 0 {
                entity +=
                    "<uniquenessConstraints><uniquenessConstraint><constraint value=\"a0\"/><constraint value=\"\(odd(&random))\"/></uniquenessConstraint></uniquenessConstraints>"
            }
            text += entity + "</entity>"
        }
        if Bool.random(using: &random) {
            // non-empty literals
            text +=
                "<fetchRequest name=\"F\" entity=\"\(names.randomElement(using: &random)!)\" predicateString=\"\(["a0 == 1", "r0_0.a0 &gt; $X", "((", "SUBQUERY(r0_0, $x, $x.a0 == 1).@count &gt; 0"].randomElement(using: &random)!)\"/>"
        }
        if Bool.random(using: &random) {
            // names is not empty
            text +=
                "<configuration name=\"C\"><memberEntity name=\"\(names.randomElement(using: &random)!)\"/><memberEntity name=\"Nope\"/></configuration>"
        }
        text += "</model>"
        return (Array(text.utf8), "a random model of \(count) entities")
    }
}
