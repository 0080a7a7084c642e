import Foundation

extension FetchPredicate: CustomStringConvertible {
    /// The predicate as a format string, in Apple's style: `name BEGINSWITH[c] "a" AND age > 30`.
    ///
    /// Parsing the result gives an equal predicate. Constants without a literal form print as
    /// `CAST`s: dates as `CAST(725846400.5, "NSDate")` (seconds since 2001-01-01), UUIDs as
    /// `CAST("…", "NSUUID")`, decimals as `CAST("1.5", "NSDecimalNumber")`, references as
    /// `CAST("3/p12", "RowID")`. A `%` inside a string prints as `%%`.
    public var predicateFormat: String {
        var printer = PredicatePrinter()
        printer.print(self)
        return printer.output
    }

    public var description: String { predicateFormat }
}

extension FetchExpression: CustomStringConvertible {
    /// The expression as a format string (`items.@sum.price + 1`); parsing it gives an equal expression.
    public var expressionFormat: String {
        var printer = PredicatePrinter()
        printer.print(self)
        return printer.output
    }

    public var description: String { expressionFormat }
}

struct PredicatePrinter {
    var output = ""

    mutating func print(_ predicate: FetchPredicate) {
        switch predicate {
        case .constant(let value): output += value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let inner):
            output += "NOT "
            printOperand(inner)
        case .and(let parts): printCompound(parts, "AND", empty: "TRUEPREDICATE")
        case .or(let parts): printCompound(parts, "OR", empty: "FALSEPREDICATE")
        case .comparison(let comparison): print(comparison)
        }
    }

    private mutating func printCompound(_ parts: [FetchPredicate], _ word: String, empty: String) {
        guard parts.count > 1 else {
            // The parser never makes these; print what they mean (an empty AND is true, an empty
            // OR false, a one-part compound its part).
            if let only = parts.first { printOperand(only) } else { output += empty }
            return
        }
        for (index, part) in parts.enumerated() {
            if index > 0 { output += " \(word) " }
            printOperand(part)
        }
    }

    /// A subpredicate of NOT, AND or OR: compounds get parentheses.
    private mutating func printOperand(_ predicate: FetchPredicate) {
        switch predicate {
        case .and(let parts) where parts.count > 1, .or(let parts) where parts.count > 1:
            output += "("
            print(predicate)
            output += ")"
        default: print(predicate)
        }
    }

    mutating func print(_ comparison: ComparisonPredicate) {
        if comparison.modifier != .direct { output += comparison.modifier.rawValue + " " }
        printOperand(comparison.lhs)
        output += " " + comparison.op.rawValue + comparison.options.formatSuffix + " "
        printOperand(comparison.rhs)
    }

    /// An operand of a comparison: anything but a bare predicate prints as is.
    private mutating func printOperand(_ expression: FetchExpression) { print(expression) }

    mutating func print(_ expression: FetchExpression) {
        switch expression {
        case .constant(let value): printConstant(value)
        case .aggregate(let items):
            output += "{"
            for (index, item) in items.enumerated() {
                if index > 0 { output += ", " }
                print(item)
            }
            output += "}"
        case .evaluatedObject: output += "SELF"
        case .keyPath(let path): printKeyPath(path)
        case .member(let base, let path):
            printPostfixBase(base)
            output += "."
            printKeyPath(path)
        case .variable(let name): output += "$" + name
        case .collection(let op, let collection, let path):
            if case .evaluatedObject = collection {
                output += op.rawValue
            } else {
                printPostfixBase(collection)
                output += "." + op.rawValue
            }
            if let path {
                output += "."
                printKeyPath(path)
            }
        case .subquery(let collection, let variable, let predicate):
            output += "SUBQUERY("
            print(collection)
            output += ", $\(variable), "
            print(predicate)
            output += ")"
        case .function(let name, let arguments): printFunction(name, arguments)
        case .ternary(let condition, let whenTrue, let whenFalse):
            output += "TERNARY("
            print(condition)
            output += ", "
            print(whenTrue)
            output += ", "
            print(whenFalse)
            output += ")"
        }
    }

    /// An expression followed by `.key`: primaries print bare, others in parentheses.
    private mutating func printPostfixBase(_ expression: FetchExpression) {
        switch expression {
        case .function(let name, _) where PredicateFunction.infix[name] != nil:
            output += "("
            print(expression)
            output += ")"
        case .constant(.integer), .constant(.double):
            output += "("
            print(expression)
            output += ")"
        default: print(expression)
        }
    }

    private mutating func printFunction(_ name: String, _ arguments: [FetchExpression]) {
        if let (symbol, _) = PredicateFunction.infix[name], arguments.count == 2 {
            printArithmeticOperand(arguments[0])
            output += " \(symbol) "
            printArithmeticOperand(arguments[1])
            return
        }
        if name == "castObject:toType:", arguments.count == 2 {
            output += "CAST("
            print(arguments[0])
            output += ", "
            print(arguments[1])
            output += ")"
            return
        }
        output += name + "("
        for (index, argument) in arguments.enumerated() {
            if index > 0 { output += ", " }
            print(argument)
        }
        output += ")"
    }

    /// An operand of an infix operator: other infix operations and negative numbers get
    /// parentheses, so the tree reads back unchanged whatever the precedences.
    private mutating func printArithmeticOperand(_ expression: FetchExpression) {
        switch expression {
        case .function(let name, let arguments) where PredicateFunction.infix[name] != nil && arguments.count == 2:
            output += "("
            print(expression)
            output += ")"
        case .constant(.integer(let n)) where n < 0:
            output += "(\(n))"
        case .constant(.double(let d)) where d < 0 || (d == 0 && d.sign == .minus):
            output += "("
            printConstant(.double(d))
            output += ")"
        default: print(expression)
        }
    }

    private mutating func printKeyPath(_ path: String) {
        var first = true
        for component in path.split(separator: ".", omittingEmptySubsequences: false) {
            if !first { output += "." }
            first = false
            let name = String(component)
            if name.hasPrefix("@")
                || (KeyPathSyntax.isPlainKey(name) && !KeyPathSyntax.reservedWords.contains(name.uppercased()))
            {
                output += name
            } else {
                output += "#" + name
            }
        }
    }

    mutating func printConstant(_ value: StoreValue) {
        switch value {
        case .null: output += "nil"
        case .bool(let b): output += b ? "YES" : "NO"
        case .integer(let n):
            // Int64.min has no literal (the lexer reads 9223372036854775808 as a double).
            output += n == .min ? "CAST(\"\(n)\", \"NSNumber\")" : String(n)
        case .double(let d):
            if d.isFinite {
                var text = String(d)
                if !text.contains(".") && !text.contains("e") { text += ".0" }
                output += text
            } else {
                output += "CAST(\"\(d)\", \"NSNumber\")"
            }
        case .decimal(let d): output += "CAST(\"\(d)\", \"NSDecimalNumber\")"
        case .string(let s): printString(s)
        case .date(let d): output += "CAST(\(String(d.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .binary(let data): output += "CAST(\"\(data.base64EncodedString())\", \"NSData\")"
        case .uuid(let u): output += "CAST(\"\(u.uuidString)\", \"NSUUID\")"
        case .uri(let u):
            output += "CAST("
            printString(u.absoluteString)
            output += ", \"NSURL\")"
        case .reference(let id): output += "CAST(\"\(id)\", \"RowID\")"
        case .references(let ids):
            print(FetchExpression.aggregate(ids.map { .constant(.reference($0)) }))
        case .unfetched: output += "nil"
        }
    }

    private mutating func printString(_ s: String) {
        output += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\t": output += "\\t"
            case "\r": output += "\\r"
            case "%": output += "%%"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    output += "\\u" + String(format: "%04X", scalar.value)
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
