import Foundation

/// A log-log SVG of median µs per operation against N: one panel per (operation, secret size), a solid line
/// per backend and a dashed line per limit (in the backend's colour).
enum Chart {
    static let ops: [Op] = [.add, .lookup, .update, .delete]
    private static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    private static let dashes = ["", "7,4", "2,3", "10,3,2,3"]

    static func svg(_ measurements: [Measurement], sizes: [Int]) -> String {
        let panelWidth = 330.0, panelHeight = 250.0
        let margin = (left: 62.0, right: 14.0, top: 30.0, bottom: 42.0)
        let targets = orderedTargets(measurements)
        let legendHeight = 22.0 * Double((targets.count + 2) / 3) + 46
        let width = Double(ops.count) * panelWidth
        let height = legendHeight + Double(sizes.count) * panelHeight
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(width / 2)" y="20" text-anchor="middle" font-size="15" font-weight="bold">\
            SecureStore: median µs per operation against N (log-log)</text>

            """
        // Legend.
        for (i, target) in targets.enumerated() {
            let x = 20.0 + Double(i % 3) * (width - 40) / 3, y = 42.0 + Double(i / 3) * 22
            let style = self.style(target, measurements)
            svg += "<line x1=\"\(x)\" y1=\"\(y)\" x2=\"\(x + 34)\" y2=\"\(y)\" stroke=\"\(style.color)\" stroke-width=\"2.5\""
            svg += style.dash.isEmpty ? "/>\n" : " stroke-dasharray=\"\(style.dash)\"/>\n"
            svg += "<text x=\"\(x + 42)\" y=\"\(y + 4)\">\(escape(target))</text>\n"
        }
        for (row, size) in sizes.enumerated() {
            for (column, op) in ops.enumerated() {
                let originX = Double(column) * panelWidth, originY = legendHeight + Double(row) * panelHeight
                let plot = (x: originX + margin.left, y: originY + margin.top,
                            w: panelWidth - margin.left - margin.right, h: panelHeight - margin.top - margin.bottom)
                let rows = measurements.filter { $0.op == op && $0.secretBytes == size }
                svg += panel(rows, targets: targets, all: measurements, title: "\(op.rawValue), \(Report.size(size)) secret",
                             plot: plot)
            }
        }
        return svg + "</svg>\n"
    }

    private static func orderedTargets(_ measurements: [Measurement]) -> [String] {
        var seen: [String] = []
        for m in measurements where !seen.contains(m.target) { seen.append(m.target) }
        // Each backend followed by its limits.
        let backends = seen.filter { name in measurements.contains { $0.target == name && !$0.isLimit } }
        var ordered: [String] = []
        for backend in backends {
            ordered.append(backend)
            ordered += seen.filter { name in measurements.contains { $0.target == name && $0.isLimit && $0.backend == backend } }
        }
        return ordered + seen.filter { !ordered.contains($0) }
    }

    private static func style(_ target: String, _ measurements: [Measurement]) -> (color: String, dash: String) {
        let backends = orderedTargets(measurements).filter { name in
            measurements.contains { $0.target == name && !$0.isLimit }
        }
        guard let sample = measurements.first(where: { $0.target == target }) else { return ("black", "") }
        let family = backends.firstIndex(of: sample.backend) ?? 0
        let color = palette[family % palette.count]
        guard sample.isLimit else { return (color, "") }
        let limits = orderedTargets(measurements).filter { name in
            measurements.contains { $0.target == name && $0.isLimit && $0.backend == sample.backend }
        }
        let index = (limits.firstIndex(of: target) ?? 0) + 1
        return (color, dashes[min(index, dashes.count - 1)])
    }

    private static func panel(_ rows: [Measurement], targets: [String], all: [Measurement], title: String,
                              plot: (x: Double, y: Double, w: Double, h: Double)) -> String {
        var out = "<text x=\"\(plot.x + plot.w / 2)\" y=\"\(plot.y - 10)\" text-anchor=\"middle\" font-weight=\"bold\">\(escape(title))</text>\n"
        out += "<rect x=\"\(plot.x)\" y=\"\(plot.y)\" width=\"\(plot.w)\" height=\"\(plot.h)\" fill=\"none\" stroke=\"#333\"/>\n"
        let values = rows.map(\.medianMicros).filter { $0 > 0 }
        let counts = rows.map { Double($0.n) }
        guard let vMin = values.min(), let vMax = values.max(), let nMin = counts.min(), let nMax = counts.max() else {
            return out
        }
        var x0 = floor(log10(nMin)), x1 = ceil(log10(nMax))
        if x1 <= x0 { x0 -= 1; x1 += 1 }
        var y0 = floor(log10(vMin)), y1 = ceil(log10(vMax))
        if y1 <= y0 { y1 += 1 }
        func px(_ n: Double) -> Double { plot.x + (log10(n) - x0) / (x1 - x0) * plot.w }
        func py(_ v: Double) -> Double { plot.y + plot.h - (log10(v) - y0) / (y1 - y0) * plot.h }
        // Ticks and grid.
        for e in stride(from: x0, through: x1, by: 1) {
            let x = px(pow(10, e))
            out += "<line x1=\"\(x)\" y1=\"\(plot.y)\" x2=\"\(x)\" y2=\"\(plot.y + plot.h)\" stroke=\"#ddd\"/>\n"
            out += "<line x1=\"\(x)\" y1=\"\(plot.y + plot.h)\" x2=\"\(x)\" y2=\"\(plot.y + plot.h + 5)\" stroke=\"#333\"/>\n"
            out += "<text x=\"\(x)\" y=\"\(plot.y + plot.h + 17)\" text-anchor=\"middle\">\(label(pow(10, e)))</text>\n"
        }
        for e in stride(from: y0, through: y1, by: 1) {
            let y = py(pow(10, e))
            out += "<line x1=\"\(plot.x)\" y1=\"\(y)\" x2=\"\(plot.x + plot.w)\" y2=\"\(y)\" stroke=\"#ddd\"/>\n"
            out += "<line x1=\"\(plot.x - 5)\" y1=\"\(y)\" x2=\"\(plot.x)\" y2=\"\(y)\" stroke=\"#333\"/>\n"
            out += "<text x=\"\(plot.x - 8)\" y=\"\(y + 4)\" text-anchor=\"end\">\(label(pow(10, e)))</text>\n"
        }
        out += "<text x=\"\(plot.x + plot.w / 2)\" y=\"\(plot.y + plot.h + 33)\" text-anchor=\"middle\">N (items)</text>\n"
        out += "<text transform=\"translate(\(plot.x - 46) \(plot.y + plot.h / 2)) rotate(-90)\" text-anchor=\"middle\">µs per op (median)</text>\n"
        // One line per target.
        for target in targets {
            let points = rows.filter { $0.target == target && $0.medianMicros > 0 }.sorted { $0.n < $1.n }
            guard !points.isEmpty else { continue }
            let style = self.style(target, all)
            let path = points.map { String(format: "%.1f,%.1f", px(Double($0.n)), py($0.medianMicros)) }
            out += "<polyline fill=\"none\" stroke=\"\(style.color)\" stroke-width=\"2\" points=\"\(path.joined(separator: " "))\""
            out += style.dash.isEmpty ? "/>\n" : " stroke-dasharray=\"\(style.dash)\"/>\n"
            for p in points {
                out += String(format: "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%@\"/>\n",
                              px(Double(p.n)), py(p.medianMicros), style.color)
            }
        }
        return out
    }

    private static func label(_ value: Double) -> String {
        switch value {
        case 1_000_000...: return "\(Int(value / 1_000_000))M"
        case 1_000...: return "\(Int(value / 1_000))k"
        case 1...: return "\(Int(value))"
        default: return String(format: "%g", value)
        }
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
