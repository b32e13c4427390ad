import Foundation
import Testing
import TestSupport
import SecureStoreCLI

/// The completions and the man page list every command and option of the command table, and work in the
/// shells and in man.
@Suite("securestore completions and man page")
struct GeneratorTests {

    func output(_ args: [String]) throws -> String {
        let out = try Tool.sqlite().run(args)
        #expect(out.status == 0, "\(args): \(out.stderr)")
        return String(decoding: out.stdout, as: UTF8.self)
    }

    /// Runs a shell command line with bash; its status and output.
    func bash(_ script: String) throws -> (status: Int32, output: String) {
        let outFile = FileManager.default.temporaryDirectory.appendingPathComponent("gen-\(UUID().uuidString)").path
        defer { unlink(outFile) }
        var env = ProcessInfo.processInfo.environment
        env["PATH"] = URL(fileURLWithPath: try Tool.path()).deletingLastPathComponent().path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        guard let pid = spawn("/bin/bash", ["-c", script + " 2>&1"], environment: env, stdout: outFile) else {
            throw Tool.ToolError(message: "cannot start bash")
        }
        let status = reap(pid, timeout: .seconds(60))
        return (status, (try? String(contentsOfFile: outFile, encoding: .utf8)) ?? "")
    }

    @Test("the table names every command the tool dispatches, and each command's help exists")
    func tableIsComplete() throws {
        let tool = try Tool.sqlite()
        for command in CLITable.commands {
            let help = try tool.run([command.name, "--help"])
            #expect(help.status == 0 && String(decoding: help.stdout, as: UTF8.self).contains("usage: securestore \(command.name)"),
                    "no help for \(command.name)")
        }
        // An option of the table that the command does not accept would be a lie in the completions.
        let unknown = try tool.run(["add", "--no-such-option"])
        #expect(unknown.status == 2)
    }

    @Test("bash: the completion loads and completes every command and option of the table")
    func bashCompletion() throws {
        let loaded = try bash("source <(securestore completions bash) && complete -p securestore")
        #expect(loaded.status == 0 && loaded.output.contains("complete -F _securestore securestore"), "\(loaded.output)")
        // Ask the completion function itself, as bash does on Tab.
        func complete(_ words: [String]) throws -> Set<String> {
            let array = words.map { "'\($0)'" }.joined(separator: " ")
            let run = try bash("""
                source <(securestore completions bash)
                COMP_WORDS=(\(array)); COMP_CWORD=\(words.count - 1); _securestore; printf '%s\\n' "${COMPREPLY[@]}"
                """)
            #expect(run.status == 0, "\(run.output)")
            return Set(run.output.split(separator: "\n").map(String.init))
        }
        #expect(try complete(["securestore", ""]) == Set(CLITable.commands.map(\.name)))
        #expect(try complete(["securestore", "-"]) == Set(CLITable.globalOptions.map(\.flag)))
        for command in CLITable.commands {
            let offered = try complete(["securestore", "--config", "x.json", command.name, "--"])
            for option in command.options {
                #expect(offered.contains(option.flag), "\(command.name) \(option.flag) not completed")
            }
            for option in command.options where !option.choices.isEmpty {
                #expect(try complete(["securestore", command.name, option.flag, ""]) == Set(option.choices))
            }
            if !command.operands.isEmpty {
                #expect(try complete(["securestore", command.name, ""]).isSuperset(of: command.operands))
            }
        }
    }

    @Test("zsh and fish scripts name every command and option")
    func otherShells() throws {
        for shell in ["zsh", "fish"] {
            let script = try output(["completions", shell])
            for command in CLITable.commands {
                #expect(script.contains(shell == "fish" ? "-a \(command.name) " : "'\(command.name):"), "\(shell): \(command.name)")
                for option in command.options {
                    let mark = shell == "fish" ? "-l \(option.name)" : "\(option.flag)["
                    #expect(script.contains(mark), "\(shell): \(command.name) \(option.name)")
                }
            }
            // Syntax-checked when the shell is installed.
            for path in ["/usr/bin/\(shell)", "/bin/\(shell)"] where FileManager.default.isExecutableFile(atPath: path) {
                let checked = try bash("securestore completions \(shell) > /tmp/ss-\(shell)-$$ && \(path) -n /tmp/ss-\(shell)-$$; s=$?; rm -f /tmp/ss-\(shell)-$$; exit $s")
                #expect(checked.status == 0, "\(shell) -n: \(checked.output)")
                break
            }
        }
        let bad = try Tool.sqlite().run(["completions", "tcsh"])
        #expect(bad.status == 2)
    }

    @Test("the man page renders and lists every command and option")
    func manPage() throws {
        let page = try output(["manpage"])
        #expect(page.hasPrefix(".\\\"") && page.contains(".TH SECURESTORE 1"))
        // Rendered as man would (groff's man macros); plain text without overstrike.
        let rendered = try bash("securestore manpage | groff -man -Tutf8 -P-cbou -ww 2>&1")
        guard rendered.status == 0, !rendered.output.contains("command not found") else {
            Issue.record("groff is needed to render the man page: \(rendered.output)")
            return
        }
        #expect(!rendered.output.contains("warning"), "\(rendered.output)")
        let text = rendered.output.replacingOccurrences(of: "\u{2010}", with: "-").replacingOccurrences(of: "\u{2212}", with: "-")
            .split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        for option in CLITable.globalOptions { #expect(text.contains(option.flag), "global \(option.flag)") }
        for command in CLITable.commands {
            #expect(text.contains("securestore \(command.name)"), "command \(command.name)")
            #expect(text.contains(command.details.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")),
                    "details of \(command.name)")
            #expect(text.contains(command.summary.split(separator: " ").joined(separator: " ")), "summary of \(command.name)")
            for option in command.options { #expect(text.contains(option.flag), "\(command.name) \(option.flag)") }
        }
        // man -l renders the file the script writes.
        let script = packageRoot.appendingPathComponent("scripts/manpage.sh").path
        let viaMan = try bash("d=$(mktemp -d) && SECURESTORE_TOOL=\"$(command -v securestore)\" \(script) \"$d/securestore.1\" >/dev/null && MANWIDTH=100 man -l \"$d/securestore.1\" | cat; s=${PIPESTATUS[0]}; rm -rf \"$d\"; exit $s")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/man") {
            #expect(viaMan.status == 0 && viaMan.output.contains("SECURESTORE(1)"), "\(viaMan.output)")
        }
    }
}
