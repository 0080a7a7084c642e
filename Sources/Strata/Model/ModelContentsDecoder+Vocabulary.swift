/// The XML attributes and child elements Xcode writes in an `.xcdatamodel/contents` file, per
/// element (Xcode-written corpus files, momdec, MomXML and app files; docs/models.md).
///
/// An attribute or element listed here loads silently, whether Strata uses it or not (docs/models.md
/// says which are used); anything else loads with a ``ModelWarning``, so that a file from a newer
/// Xcode still opens and its user learns what was left out.
enum ModelVocabulary {
    static let attributes: [String: Set<String>] = [
        "model": [
            "type", "documentVersion", "lastSavedToolsVersion", "systemVersion", "minimumToolsVersion",
            "sourceLanguage", "userDefinedModelVersionIdentifier", "name", "macOSVersion", "iOSVersion",
            "usedWithCloudKit", "usedWithSwiftData",
        ],
        "entity": [
            "name", "representedClassName", "parentEntity", "isAbstract", "elementID", "versionHashModifier",
            "codeGenerationType", "syncable", "renamingIdentifier",
        ],
        "attribute": [
            "name", "attributeType", "optional", "transient", "indexed", "defaultValueString",
            "defaultDateTimeInterval",
            "minValueString", "maxValueString", "minDateTimeInterval", "maxDateTimeInterval", "regularExpressionString",
            "valueTransformerName", "customClassName", "allowsExternalBinaryDataStorage", "elementID",
            "versionHashModifier", "derived", "derivationExpression", "usesScalarValueType", "preserveAfterDeletion",
            "spotlightIndexingEnabled", "allowsCloudEncryption", "syncable", "storedInTruthFile", "renamingIdentifier",
            "composite",
        ],
        "relationship": [
            "name", "destinationEntity", "inverseName", "inverseEntity", "optional", "toMany", "ordered", "transient",
            "minCount", "maxCount", "deletionRule", "elementID", "versionHashModifier", "syncable", "indexed",
            "spotlightIndexingEnabled", "storedInTruthFile", "renamingIdentifier",
        ],
        "fetchedProperty": ["name", "optional", "syncable", "elementID", "versionHashModifier", "transient"],
        "fetchRequest": [
            "name", "entity", "predicateString", "resultType", "includeSubentities", "includePropertyValues",
            "includesPendingChanges", "returnObjectsAsFaults", "returnDistinctResults", "fetchLimit", "fetchBatchSize",
        ],
        "configuration": ["name", "usedWithCloudKit"],
        "memberEntity": ["name"],
        "userInfo": [],
        "entry": ["key", "value"],
        "uniquenessConstraints": [],
        "uniquenessConstraint": [],
        "constraint": ["value"],
        "fetchIndex": ["name"],
        "fetchIndexElement": ["property", "expression", "expressionType", "type", "order"],
        "composite": ["name"],
    ]

    /// Child elements each element may have. `elements` (diagram layout) and `compoundIndexes`
    /// (pre-iOS 11 indexes, superseded by `fetchIndex`) are known and not read.
    static let children: [String: Set<String>] = [
        "model": ["entity", "fetchRequest", "configuration", "userInfo", "elements"],
        "entity": [
            "attribute", "relationship", "fetchedProperty", "uniquenessConstraints", "fetchIndex", "userInfo",
            "compoundIndexes",
        ],
        "attribute": ["userInfo"],
        "relationship": ["userInfo"],
        "fetchedProperty": ["fetchRequest", "userInfo"],
        "fetchRequest": [],
        "configuration": ["memberEntity"],
        "memberEntity": [],
        "userInfo": ["entry"],
        "entry": [],
        "uniquenessConstraints": ["uniquenessConstraint"],
        "uniquenessConstraint": ["constraint"],
        "constraint": [],
        "fetchIndex": ["fetchIndexElement"],
        "fetchIndexElement": [],
        "composite": ["attribute"],
    ]
}

extension ModelContentsDecoder {
    /// Records a warning at `element`'s line.
    mutating func warn(_ message: String, _ element: ModelXMLElement, _ label: String) {
        contents.warnings.append(ModelWarning(message, file: fileName, line: element.line, element: label))
    }

    /// Warns about each XML attribute of `element` that Xcode does not write there, in name order
    /// (XML attributes have no order).
    mutating func checkAttributes(of element: ModelXMLElement, _ label: String) {
        guard let known = ModelVocabulary.attributes[element.name] else { return }
        for name in element.attributes.keys.sorted() where !known.contains(name) {
            warn("XML attribute '\(name)' is not one Strata knows on <\(element.name)>; it is ignored", element, label)
        }
    }

    /// Warns about each child of `element` that Xcode does not write there. `handled` names
    /// children the caller reads although the table does not list them (another helper's parts).
    mutating func checkChildren(of element: ModelXMLElement, _ label: String, handled: Set<String> = []) {
        guard let known = ModelVocabulary.children[element.name] else { return }
        for child in element.children where !known.contains(child.name) && !handled.contains(child.name) {
            warn(
                "element <\(child.name)> is not one Strata knows inside <\(element.name)>; it is ignored", child, label)
        }
    }

    /// Checks the attributes and children of `element` and, recursively, of its children that
    /// the decoder reads without a function of their own (`userInfo`, `uniquenessConstraints`, …).
    mutating func checkVocabulary(of element: ModelXMLElement, _ label: String) {
        checkAttributes(of: element, label)
        checkChildren(of: element, label)
        for child in element.children where Self.checkedWithParent.contains(child.name) {
            checkVocabulary(of: child, label)
        }
    }

    /// Elements checked as part of their parent.
    private static let checkedWithParent: Set<String> = [
        "userInfo", "entry", "uniquenessConstraints", "uniquenessConstraint", "constraint", "fetchIndex",
        "fetchIndexElement", "memberEntity",
    ]
}
