import Foundation

/// ISO 8601 timestamps in UTC with fractional seconds, exact both ways: formatting writes as many
/// fraction digits as the date needs to parse back to the same `Date` (at least three).
public enum ISO8601Timestamp {
    private static let referenceEpoch: Int64 = 978_307_200  // 2001-01-01T00:00:00Z in Unix seconds

    /// 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z in seconds since 2001-01-01: the dates with
    /// four-digit years.
    private static let firstFourDigitYear: Double = -63_145_526_400
    private static let pastFourDigitYears: Double = 252_423_993_600

    /// `2024-05-01T12:30:00.250Z`; a date without a four-digit year (or not finite) is clamped to
    /// `0001-01-01T00:00:00.000Z` or `9999-12-31T23:59:59.999Z` (``exactString(from:)`` says when).
    public static func string(from date: Date) -> String {
        if let exact = exactString(from: date) { return exact }
        return date.timeIntervalSinceReferenceDate > 0 ? "9999-12-31T23:59:59.999Z" : "0001-01-01T00:00:00.000Z"
    }

    /// `2024-05-01T12:30:00.250Z`, which ``date(from:)`` reads back to the same `Date` bit for bit;
    /// `nil` for a date this form cannot carry (not finite, a year outside 0000–9999, or a fraction
    /// of a second that needs more than 17 digits, such as 1e-20 seconds after 2001).
    public static func exactString(from date: Date) -> String? {
        let r = date.timeIntervalSinceReferenceDate
        // Checked before any conversion to an integer: whole seconds of this range fit Int64.
        guard r.isFinite, r >= firstFourDigitYear, r < pastFourDigitYears else { return nil }
        let whole = r.rounded(.down)
        let fraction = r - whole
        var unix = Int64(whole) + referenceEpoch
        var digits = 3
        var text = ""
        while true {
            let scale = pow(10, Double(digits))
            var n = (fraction * scale).rounded()
            var carry: Int64 = 0
            if n >= scale {
                n = 0
                carry = 1
            }
            if whole + Double(carry) + n / scale == r {
                unix += carry
                let padded = String(repeating: "0", count: max(0, digits - String(Int64(n)).count)) + String(Int64(n))
                text = padded
                break
            }
            // A fraction 17 digits do not hold (a date within a hair of a whole second): no exact text.
            if digits >= 17 { return nil }
            digits += 1
        }
        let days = floorDiv(unix, 86_400)
        let seconds = unix - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        guard (0...9999).contains(year) else { return nil }  // a fraction carried into year 10000
        // Digits by hand: String(format:) was a fifth of an export's time.
        var out = [UInt8]()
        out.reserveCapacity(24 + text.utf8.count)
        func append(_ value: Int64, width: Int) {
            var digits = [UInt8](repeating: UInt8(ascii: "0"), count: width)
            var rest = value
            for index in stride(from: width - 1, through: 0, by: -1) {
                digits[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            out.append(contentsOf: digits)
        }
        append(Int64(year), width: 4)
        out.append(UInt8(ascii: "-"))
        append(Int64(month), width: 2)
        out.append(UInt8(ascii: "-"))
        append(Int64(day), width: 2)
        out.append(UInt8(ascii: "T"))
        append(seconds / 3600, width: 2)
        out.append(UInt8(ascii: ":"))
        append(seconds / 60 % 60, width: 2)
        out.append(UInt8(ascii: ":"))
        append(seconds % 60, width: 2)
        out.append(UInt8(ascii: "."))
        out.append(contentsOf: text.utf8)
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` or a plain `YYYY-MM-DD` (midnight UTC).
    public static func date(from text: String) -> Date? {
        let chars = Array(text.utf8)
        var index = 0
        func number(_ count: Int) -> Int64? {
            guard index + count <= chars.count else { return nil }
            var value: Int64 = 0
            for c in chars[index..<index + count] {
                guard (48...57).contains(c) else { return nil }
                value = value * 10 + Int64(c - 48)
            }
            index += count
            return value
        }
        func expect(_ c: Character) -> Bool {
            guard index < chars.count, chars[index] == c.asciiValue else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        let days = self.days(fromCivil: year, month, day)
        if index == chars.count { return Date(timeIntervalSinceReferenceDate: Double(days * 86_400 - referenceEpoch)) }
        guard expect("T") || expect(" "), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
            let second = number(2), hour < 24, minute < 60, second < 61
        else { return nil }
        var fraction: Double = 0
        if expect(".") || expect(",") {
            let start = index
            while index < chars.count, (48...57).contains(chars[index]) { index += 1 }
            guard index > start, let digits = Double("0." + String(decoding: chars[start..<index], as: UTF8.self))
            else {
                return nil
            }
            fraction = digits
        }
        var offset: Int64 = 0
        if expect("Z") || expect("z") {
        } else if index < chars.count, chars[index] == 43 || chars[index] == 45 {
            let sign: Int64 = chars[index] == 45 ? -1 : 1
            index += 1
            guard let hours = number(2) else { return nil }
            _ = expect(":")
            guard let minutes = number(2) else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard index == chars.count else { return nil }
        let unix = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSinceReferenceDate: Double(unix - referenceEpoch) + fraction)
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

    /// Howard Hinnant's civil-from-days.
    private static func civil(fromDays z0: Int64) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (Int(yoe + era * 400 + (m <= 2 ? 1 : 0)), Int(m), Int(d))
    }

    private static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
