import Foundation
import Testing
import SecureStoreCore
import SecureStoreCLI

/// The table-driven parser, in process (no I/O): what the executable and the fuzz harness call.
@Suite("securestore CLI parser and command table")
struct CLIParserTests {
    func request(_ args: [String]) -> Request? {
        if case .success(.run(let parsed)) = ArgumentParser.parse(args) { return parsed.request }
        return nil
    }

    func error(_ args: [String]) -> String? {
        if case .failure(let e) = ArgumentParser.parse(args) { return e.message }
        return nil
    }

    @Test("help is generated from the table: every command and every option it accepts appear in it")
    func helpFromTable() throws {
        let global = HelpText.global
        for command in CLITable.commands {
            #expect(global.contains("  \(command.name) "), "global help lists \(command.name)")
            let help = try #require(HelpText.command(command.name))
            #expect(help.hasPrefix("usage: securestore \(command.name)"))
            for option in command.options + [CLITable.help] { #expect(help.contains(option.synopsis), "\(command.name): \(option.flag)") }
            for (code, _) in ExitStatus.table { #expect(help.contains("\n  \(code) ")) }
        }
        for option in CLITable.globalOptions { #expect(global.contains(option.synopsis)) }
        #expect(HelpText.command("nosuch") == nil)
    }

    @Test("every item option sets its own attribute, which the parsed request carries")
    func itemOptions() {
        for option in CLITable.itemOptions where option.name != "class" && option.name != "attr" {
            let attribute = CLITable.attributeOptions[option.name]
            #expect(attribute != nil, "\(option.flag) sets no attribute")
            let value = option.name == "port" ? "80" : "v"
            guard case .find(let items, _)? = request(["find", option.flag, value]), let attribute else {
                Issue.record("find \(option.flag) did not parse"); continue
            }
            #expect(items.attributes.keys.map { $0 } == [attribute])
        }
        #expect(Set(CLITable.attributeOptions.values).count == CLITable.attributeOptions.count)
    }

    @Test("values are values; -h only where an option is expected; inline values; --")
    func values() {
        #expect(request(["add", "--service", "s", "--account", "-h"])
            == .add(ItemSelection(attributes: [.service: "s", .account: "-h"]), updateExisting: false))
        #expect(request(["get", "--service", "--help", "--account", "x"]) == .get(ItemSelection(attributes: [.service: "--help", .account: "x"])))
        #expect(ArgumentParser.parse(["get", "--service", "x", "-h"]) == .success(.help(command: "get")))
        #expect(ArgumentParser.parse(["-h", "get"]) == .success(.help(command: nil)))
        #expect(ArgumentParser.parse(["--version"]) == .success(.version))
        #expect(request(["get", "--service=a=b", "--"]) == .get(ItemSelection(attributes: [.service: "a=b"])))
        #expect(request(["--", "backends"]) == .backends)
        #expect(error(["backends", "--", "x"]) != nil)
        #expect(request(["rekey", "--new-passphrase-env", "P"]) == .rekey(.passphraseEnvironment("P")))
        #expect(request(["clear", "--yes"]) == .clear(classes: Set(ItemClass.allCases)))
        #expect(error(["clear"])?.contains("--yes") == true)
        #expect(request(["find", "--class", "internet", "--port", "443", "--json"])
            == .find(ItemSelection(itemClass: .internetPassword, classGiven: true, attributes: [.port: .number(443)]), json: true))
    }

    @Test("every parsed line renders back to arguments that parse to the same request")
    func roundTrip() throws {
        let lines: [[String]] = [
            ["--config", "c.json", "--backend", "memory", "add", "--service", "s", "--attr", "comment=a", "--update-existing"],
            ["update", "--all", "--set-attr", "gena=base64:AAEC", "--set-attr", "creationDate=2024-05-01T12:00:00Z", "--data-stdin"],
            ["delete", "--class", "key", "--all"], ["export", "--output", "-h"], ["migrate", "--to", "--"],
        ]
        for line in lines {
            guard case .success(.run(let parsed)) = ArgumentParser.parse(line) else { Issue.record("\(line) did not parse"); continue }
            #expect(ArgumentParser.parse(parsed.arguments()) == .success(.run(parsed)))
            #expect(ArgumentParser.parse(parsed.arguments(inline: true)) == .success(.run(parsed)))
        }
    }

    @Test("find's escaping round-trips and keeps every value on one line")
    func escaping() {
        for text in ["", "plain", "a\"b\\c\nd\re\tf\u{0}\u{1B}\u{7F}\u{85}\u{2028}\u{2029}é😀", "\\u0041"] {
            let escaped = TextEscaping.escaped(text)
            #expect(!escaped.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{2028}" || $0 == "\u{2029}" })
            #expect(!escaped.replacingOccurrences(of: "\\\\", with: "").replacingOccurrences(of: "\\\"", with: "").contains("\""))
            #expect(TextEscaping.unescaped(escaped) == text)
            #expect(!TextEscaping.controlsEscaped(text).unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x9B })
        }
        #expect(TextEscaping.controlsEscaped("a \"b\" \\ c") == "a \"b\" \\ c", "only controls are escaped in messages")
        // Values quoted in usage errors never carry a control character to the terminal.
        for args in [["\u{1B}[2J"], ["get", "--\u{1B}[2J"], ["add", "--class", "\u{9B}31m"], ["add", "--attr", "\u{1B}=x"]] {
            let message = error(args) ?? ""
            #expect(!message.isEmpty && !message.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B }, "\(args): \(message)")
        }
    }

    @Test("unlock --for takes 1s to 24h in s, m, h, d or plain seconds; completions takes one shell word")
    func keyCacheAndGenerators() {
        #expect(request(["unlock"]) == .unlock(seconds: Request.defaultUnlockSeconds))
        for (text, seconds) in [("90", 90), ("90s", 90), ("15m", 900), ("8h", 28800), ("1d", 86400), ("--for=1s", 1)] {
            let args = text.hasPrefix("--") ? ["unlock", text] : ["unlock", "--for", text]
            #expect(request(args) == .unlock(seconds: seconds), "\(args)")
        }
        for bad in ["0", "0s", "25h", "2d", "86401", "1.5h", "-1h", "h", "", "1w", "1 h", "１h", "9999999"] {
            #expect(error(["unlock", "--for", bad]) != nil, "--for \(bad.debugDescription) accepted")
        }
        #expect(error(["unlock", "--for", "1h", "--for", "2h"]) != nil)
        #expect(request(["lock"]) == .lock)
        #expect(error(["lock", "now"]) != nil)
        #expect(request(["manpage"]) == .manpage)
        for shell in ["bash", "zsh", "fish"] {
            #expect(request(["completions", shell]) == .completions(shell: shell))
            #expect(request(["completions", "--", shell]) == .completions(shell: shell))
        }
        #expect(error(["completions"])?.contains("SHELL") == true)
        #expect(error(["completions", "tcsh"]) != nil)
        #expect(error(["completions", "bash", "zsh"]) != nil)
        #expect(error(["completions", "bash", "--", "zsh"]) != nil)
        #expect(error(["manpage", "bash"]) != nil, "only a command with an operand takes a word")
        // The operand renders back.
        if case .success(.run(let parsed)) = ArgumentParser.parse(["--backend", "memory", "completions", "fish"]) {
            #expect(parsed.arguments() == ["--backend", "memory", "completions", "fish"])
        } else {
            Issue.record("completions fish did not parse")
        }
    }
}
