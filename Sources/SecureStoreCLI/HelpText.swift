/// The help texts, generated from ``CLITable`` and ``ExitStatus``.
public enum HelpText {
    /// `securestore --help`.
    public static var global: String {
        let width = (CLITable.commands.map(\.name.count).max() ?? 0) + 2
        var lines = ["usage: securestore [--config FILE] [--backend NAME] COMMAND [OPTIONS]", "", "Commands:"]
        for c in CLITable.commands { lines.append("  " + pad(c.name, width) + " " + c.summary) }
        lines += ["", "Options before the command:"]
        lines += optionLines(CLITable.globalOptions)
        lines += [
            "",
            "Selection: --backend > SECURESTORE_BACKEND > --config / SECURESTORE_CONFIG / ~/.config/securestore/config.json > sqlite.",
            "`securestore COMMAND --help` describes a command's options. Options are long: --name VALUE or --name=VALUE;",
            "a value is whatever follows its option (even -h); -- ends the options. Secrets only pass through standard",
            "input and output, never arguments. Arguments must be UTF-8.",
            "",
            "Exit codes:",
        ]
        lines += exitCodeLines
        return lines.joined(separator: "\n")
    }

    /// `securestore COMMAND --help`, or nil for an unknown command.
    public static func command(_ name: String) -> String? {
        guard let c = CLITable.command(named: name) else { return nil }
        let usage = "usage: securestore \(c.name)" + (c.synopsis.isEmpty ? "" : " " + c.synopsis)
        var lines = [usage, c.details]
        let width = columnWidth(c.options + [CLITable.help])
        if c.takesItemOptions {
            lines += ["", "Item options (each attribute once, from one option; matching needs every given value):"]
            lines += optionLines(CLITable.itemOptions, width: width)
        }
        lines += ["", "Options:"]
        lines += optionLines(c.ownOptions + [CLITable.help], width: width)
        lines += ["", "Exit codes:"]
        lines += exitCodeLines
        return lines.joined(separator: "\n")
    }

    static var exitCodeLines: [String] {
        ExitStatus.table.map { "  " + pad(String($0.code), 3) + " " + $0.meaning }
    }

    static func name(_ o: CLIOption) -> String {
        (o.short.map { "-\($0), " } ?? "") + o.synopsis + (o.repeatable ? " (repeatable)" : "")
    }

    static func columnWidth(_ options: [CLIOption]) -> Int { min(34, (options.map { name($0).count }.max() ?? 0) + 2) }

    static func optionLines(_ options: [CLIOption], width: Int? = nil) -> [String] {
        let names = options.map(name)
        let width = width ?? columnWidth(options)
        return zip(names, options).map { name, o in
            name.count >= width ? "  \(name)\n  \(pad("", width)) \(o.help)" : "  \(pad(name, width)) \(o.help)"
        }
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }
}
