import Foundation

/// The model's declarative rules, checked for one object at save.
enum PropertyValidator {
    static func failures(of object: ManagedObject, context: ManagedObjectContext) -> [ObjectValidationError.Failure] {
        guard !object.faulted else { return [] }
        var failures: [ObjectValidationError.Failure] = []
        let rules = object.entity.validatedSlots
        for index in rules.indices {
            // The common cases read single fields, without copying the rule (and its name).
            let slot = rules[index].slot
            if !rules[index].isRelationship && !rules[index].hasRules {
                switch object.values[slot] {
                case .null:
                    if !rules[index].isOptional && isPresent(rules[index].presence, object) {
                        fail(
                            &failures, object, rules[index].name, .missingMandatoryProperty,
                            "'\(rules[index].name)' is required")
                    }
                case .integer(let i) where !rules[index].type.fits(i):
                    let rule = rules[index]
                    fail(
                        &failures, object, rule.name, .numberTooLarge,
                        "\(i) does not fit '\(rule.name)' (\(rule.type.xcodeName))")
                default: break
                }
                continue
            }
            let rule = rules[index]
            let value = object.values[rule.slot]
            if !rule.isRelationship {
                if value.isNull {
                    if !rule.isOptional && isPresent(rule.presence, object) {
                        fail(&failures, object, rule.name, .missingMandatoryProperty, "'\(rule.name)' is required")
                    }
                    continue
                }
                // hasRules is set only for attribute slots.
                check(object.entity.properties[rule.slot].attribute!, value) { fail(&failures, object, $0, $1, $2) }
                continue
            }
            let count: Int
            switch value {
            case .reference: count = 1
            case .references(let ids): count = ids.count
            case .unfetched: continue
            default: count = 0
            }
            if !rule.isToMany && count == 0 && !rule.isOptional {
                fail(&failures, object, rule.name, .missingMandatoryProperty, "relationship '\(rule.name)' is required")
            } else if rule.isToMany && (count > 0 || !rule.isOptional) {
                if count < rule.minCount {
                    fail(
                        &failures, object, rule.name, .relationshipTooFewItems,
                        "relationship '\(rule.name)' holds \(count), needs at least \(rule.minCount)")
                }
                if rule.maxCount > 0 && count > rule.maxCount {
                    fail(
                        &failures, object, rule.name, .relationshipTooManyItems,
                        "relationship '\(rule.name)' holds \(count), allows at most \(rule.maxCount)")
                }
            }
        }
        for requirement in object.entity.compositeRequirements
        where isPresent(requirement.contextSlots, object) && !isPresent(requirement.slots, object) {
            fail(
                &failures, object, requirement.name, .missingMandatoryProperty,
                "composite '\(requirement.name)' is required: set at least one of its elements")
        }
        return failures
    }

    /// Whether a composite whose leaves are `slots` holds a value (any leaf not `nil`); with no
    /// slots (no enclosing composite), always.
    @inline(__always) private static func isPresent(_ slots: [Int], _ object: ManagedObject) -> Bool {
        if slots.isEmpty { return true }
        return slots.contains { !object.values[$0].isNull }
    }

    private static func fail(
        _ failures: inout [ObjectValidationError.Failure], _ object: ManagedObject, _ property: String,
        _ code: ObjectValidationError.Code, _ message: String
    ) {
        failures.append(
            .init(
                objectID: object.objectID, entity: object.entity.name, property: property, code: code, message: message)
        )
    }

    static func check(
        _ attribute: AttributeDescription, _ value: StoreValue,
        _ fail: (String, ObjectValidationError.Code, String) -> Void
    ) {
        let rules = attribute.validation
        let name = attribute.name
        if let range = attribute.type.integerRange, case .integer(let i) = value, !range.contains(i) {
            fail(name, .numberTooLarge, "\(i) does not fit '\(name)' (\(attribute.type.xcodeName))")
        }
        if let minimum = rules.minimum, let order = StoreValueOrder.compare(value, minimum), order == .orderedAscending
        {
            let code: ObjectValidationError.Code = attribute.type == .date ? .dateTooSoon : .numberTooSmall
            fail(name, code, "'\(name)' is \(value.displayText), below the minimum \(minimum.displayText)")
        }
        if let maximum = rules.maximum, let order = StoreValueOrder.compare(value, maximum), order == .orderedDescending
        {
            let code: ObjectValidationError.Code = attribute.type == .date ? .dateTooLate : .numberTooLarge
            fail(name, code, "'\(name)' is \(value.displayText), above the maximum \(maximum.displayText)")
        }
        guard case .string(let text) = value else { return }
        let length = text.count
        if let minimum = rules.minimumLength, length < minimum {
            fail(name, .stringTooShort, "'\(name)' has \(length) characters, needs at least \(minimum)")
        }
        if let maximum = rules.maximumLength, length > maximum {
            fail(name, .stringTooLong, "'\(name)' has \(length) characters, allows at most \(maximum)")
        }
        // The model refused patterns that do not compile when it was built (ModelResolver), so the error cannot matter here.
        if let pattern = rules.regularExpression, let regex = try? NSRegularExpression(pattern: "^(?:\(pattern))$") {
            let range = NSRange(text.startIndex..., in: text)
            if regex.firstMatch(in: text, range: range) == nil {
                fail(name, .stringPatternMismatch, "'\(name)' (\(value.displayText)) does not match /\(pattern)/")
            }
        }
    }
}

/// Orders two scalar store values of comparable kinds (numbers with numbers, dates, strings).
enum StoreValueOrder {
    static func compare(_ a: StoreValue, _ b: StoreValue) -> ComparisonResult? {
        switch (a, b) {
        case (.date(let x), .date(let y)): return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case (.string(let x), .string(let y)):
            return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        default:
            guard let x = number(a), let y = number(b) else { return nil }
            return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        }
    }

    private static func number(_ v: StoreValue) -> Double? {
        switch v {
        case .integer(let i): Double(i)
        case .double(let d): d
        case .decimal(let d): NSDecimalNumber(decimal: d).doubleValue
        case .bool(let b): b ? 1 : 0
        default: nil
        }
    }
}
