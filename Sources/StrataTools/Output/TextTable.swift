/// A plain-text table with left-aligned text columns and right-aligned number columns.
public struct TextTable {
    /// Column headers.
    public var headers: [String]
    /// Rows of cells.
    public var rows: [[String]] = []
    /// Indices of right-aligned columns.
    public var rightAligned: Set<Int> = []

    /// Creates a table with headers.
    public init(headers: [String], rightAligned: Set<Int> = []) {
        self.headers = headers
        self.rightAligned = rightAligned
    }

    /// Appends a row.
    public mutating func append(_ row: [String]) { rows.append(row) }

    /// The rendered lines (header, rule, rows), without trailing spaces.
    public var lines: [String] {
        var widths = headers.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func render(_ cells: [String]) -> String {
            var parts: [String] = []
            for (index, width) in widths.enumerated() {
                let cell = index < cells.count ? cells[index] : ""
                let pad = String(repeating: " ", count: width - cell.count)
                parts.append(rightAligned.contains(index) ? pad + cell : cell + pad)
            }
            var line = parts.joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
        return [render(headers), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")]
            + rows.map(render)
    }

    /// The rendered table, one line per row.
    public var text: String { lines.joined(separator: "\n") }
}
