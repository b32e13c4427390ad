import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The tool as a person uses it at a terminal: driven through a real pseudo-terminal (the test reads the
/// screen and types keys), every wait bounded.
@Suite("securestore at a terminal")
struct TerminalTests {
    /// Runs `args` on a new pseudo-terminal with `tool`'s environment.
    func terminal(_ tool: Tool, _ args: [String]) throws -> PseudoTerminal {
        try PseudoTerminal(try Tool.path(), args, environment: tool.environment)
    }

    /// Answers the prompts of `term` in order with `answers`, each after its prompt appeared.
    func answer(_ term: PseudoTerminal, _ prompts: [(String, String)]) {
        var offset = 0
        for (prompt, typed) in prompts {
            #expect(term.waitFor(prompt, after: offset), "no prompt \"\(prompt)\"; screen: \(term.text)")
            offset = term.screen.count
            term.type(typed)
        }
    }

    @Test("add asks twice without echo; the stored bytes are what was typed, without the line end")
    func addPrompts() throws {
        let tool = try Tool.sqlite()
        let secret = "hunter2 with spaces ü"
        let term = try terminal(tool, ["add", "--service", "tty", "--account", "me"])
        answer(term, [("Secret for tty/me: ", secret + "\n"), ("Again: ", secret + "\n")])
        let end = term.wait()
        #expect(end.exit == 0, "screen: \(term.text)")
        #expect(!term.text.contains("hunter2"), "the typed secret appeared on the screen: \(term.text)")
        #expect(term.echoes, "echo is back on after the prompt")
        let got = try tool.run(["get", "--service", "tty", "--account", "me"])
        #expect(got.status == 0)
        #expect(got.stdout == Data(secret.utf8), "exactly the typed bytes, no newline")
    }

    @Test("a mismatch on confirmation stores nothing")
    func mismatch() throws {
        let tool = try Tool.sqlite()
        let term = try terminal(tool, ["add", "--service", "tty", "--account", "me"])
        answer(term, [("Secret for tty/me: ", "first-typed\n"), ("Again: ", "second-typed\n")])
        let end = term.wait()
        #expect(end.exit == 2, "screen: \(term.text)")
        #expect(term.text.contains("differ"))
        #expect(!term.text.contains("first-typed") && !term.text.contains("second-typed"))
        #expect(try tool.run(["find", "--service", "tty"]).status == 1, "nothing was stored")
    }

    @Test("Ctrl-C at a prompt ends the tool by SIGINT and leaves echo on; nothing is stored")
    func interrupt() throws {
        let tool = try Tool.sqlite()
        let term = try terminal(tool, ["add", "--service", "tty", "--account", "me"])
        answer(term, [("Secret for tty/me: ", "half-typed")])
        usleep(200_000)   // the half line reaches the tool's read before the interrupt
        term.type("\u{03}")
        let end = term.wait()
        #expect(end.signal == SIGINT, "status \(String(describing: end)); screen: \(term.text)")
        #expect(term.echoes, "the terminal echoes again")
        let stty = term.sttyAll()
        #expect(stty.contains(" echo ") && !stty.contains("-echo "), "stty -a: \(stty)")
        #expect(try tool.run(["find", "--service", "tty"]).status == 1, "nothing was stored")
    }

    @Test("a tool started with SIGINT ignored (nohup, a shell's trap '') leaves it ignored: Ctrl-C at a prompt does not end it")
    func interruptIgnored() throws {
        let tool = try Tool.sqlite()
        let term = try PseudoTerminal("/bin/sh", ["-c", "trap '' INT; exec \"$0\" \"$@\"", try Tool.path(),
                                                  "add", "--service", "tty", "--account", "me"],
                                      environment: tool.environment)
        answer(term, [("Secret for tty/me: ", "dropped")])
        usleep(200_000)   // the half line reaches the terminal before the interrupt
        term.type("\u{03}")   // the terminal drops the half line (no NOFLSH); the tool goes on reading
        usleep(200_000)
        term.type("kept\n")
        answer(term, [("Again: ", "kept\n")])
        let end = term.wait()
        #expect(end.exit == 0, "status \(String(describing: end)); screen: \(term.text)")
        #expect(term.echoes, "echo is back on after the prompt")
        #expect(try tool.run(["get", "--service", "tty", "--account", "me"]).stdout == Data("kept".utf8))
    }

    @Test("Ctrl-C at the confirmation prompt also restores the terminal")
    func interruptSecondPrompt() throws {
        let tool = try Tool.sqlite()
        let term = try terminal(tool, ["add", "--service", "tty", "--account", "me"])
        answer(term, [("Secret for tty/me: ", "abc\n"), ("Again: ", "\u{03}")])
        #expect(term.wait().signal == SIGINT)
        #expect(term.echoes)
    }

    @Test("get on a terminal ends with a newline; to a pipe, exactly the stored bytes")
    func getNewline() throws {
        let tool = try Tool.sqlite()
        #expect(try tool.run(["add", "--service", "s", "--account", "a"], stdin: Data("no-newline".utf8)).status == 0)
        let term = try terminal(tool, ["get", "--service", "s", "--account", "a"])
        #expect(term.wait().exit == 0)
        #expect(term.text.hasSuffix("no-newline\r\n"), "screen: \(term.text.debugDescription)")
        #expect(try tool.run(["get", "--service", "s", "--account", "a"]).stdout == Data("no-newline".utf8))
    }

    @Test("update --data-stdin asks once without echo")
    func updatePrompt() throws {
        let tool = try Tool.sqlite()
        #expect(try tool.run(["add", "--service", "s", "--account", "a"], stdin: Data("old".utf8)).status == 0)
        let term = try terminal(tool, ["update", "--service", "s", "--account", "a", "--data-stdin"])
        answer(term, [("Secret for s/a: ", "brand-new\n")])
        #expect(term.wait().exit == 0, "screen: \(term.text)")
        #expect(!term.text.contains("brand-new") && !term.text.contains("Again"))
        #expect(try tool.run(["get", "--service", "s", "--account", "a"]).stdout == Data("brand-new".utf8))
    }

    @Test("a store passphrase whose variable is unset is asked on a terminal (twice for a new store); a script gets an error")
    func passphrasePrompt() throws {
        let tool = try Tool.configured { dir in
            #"{"sqlite": {"path": "\#(dir)/p.db", "passphraseEnv": "SECURESTORE_TEST_TTY_PASSPHRASE"}}"#
        }
        let term = try terminal(tool, ["add", "--service", "s", "--account", "a"])
        answer(term, [("New store passphrase: ", "correct horse\n"), ("Again: ", "correct horse\n"),
                      ("Secret for s/a: ", "value\n"), ("Again: ", "value\n")])
        #expect(term.wait().exit == 0, "screen: \(term.text)")
        #expect(!term.text.contains("correct horse"))
        // No terminal: an error naming the variable, at once.
        let script = try tool.run(["get", "--service", "s", "--account", "a"])
        #expect(script.status == 6 && script.stderr.contains("SECURESTORE_TEST_TTY_PASSPHRASE"))
        // With the variable: the same passphrase opens it.
        let env = Tool(environment: tool.environment.merging(["SECURESTORE_TEST_TTY_PASSPHRASE": "correct horse"]) { _, b in b })
        #expect(try env.run(["get", "--service", "s", "--account", "a"]).stdout == Data("value".utf8))
        // A wrong passphrase typed at the terminal: authentication failed.
        let wrong = try terminal(tool, ["get", "--service", "s", "--account", "a"])
        answer(wrong, [("Store passphrase: ", "wrong horse\n")])
        #expect(wrong.wait().exit == 4, "screen: \(wrong.text)")
    }
}

/// `unlock` and `lock` as a person and a script use them (the kernel keyring; skipped where it cannot be used).
@Suite("securestore unlock and lock")
struct UnlockCLITests {
    static let variable = "SECURESTORE_TEST_UNLOCK_PASSPHRASE"

    /// A passphrase store whose config names `variable`; `tool` runs without it, `withPassphrase` with it.
    func stores() throws -> (tool: Tool, withPassphrase: Tool) {
        let tool = try Tool.configured { dir in #"{"sqlite": {"path": "\#(dir)/p.db", "passphraseEnv": "\#(Self.variable)"}}"# }
        var env = tool.environment
        env[Self.variable] = "correct horse"
        return (tool, Tool(environment: env))
    }

    func text(_ outcome: Tool.Outcome) -> String { String(decoding: outcome.stdout, as: UTF8.self) + outcome.stderr }

    @Test("unlock, then calls without the passphrase read the store; lock, rekey and the timeout end it with a clear error")
    func unlockLock() throws {
        let (tool, withPassphrase) = try stores()
        defer { _ = try? tool.run(["lock"]) }
        #expect(try withPassphrase.run(["add", "--service", "s", "--account", "a"], stdin: Data("value".utf8)).status == 0)
        let unlock = try withPassphrase.run(["unlock", "--for", "10m"])
        guard unlock.status == 0 else {
            #expect(unlock.stderr.contains("keyring"), "\(unlock.stderr)")   // a sandbox without keyctl: a clear error
            return
        }
        #expect(text(unlock).contains("for 10m"))
        for _ in 0..<3 { #expect(try tool.run(["get", "--service", "s", "--account", "a"]).stdout == Data("value".utf8)) }
        #expect(try tool.run(["add", "--service", "s", "--account", "b"], stdin: Data("second".utf8)).status == 0)
        let lock = try tool.run(["lock"])
        #expect(lock.status == 0 && text(lock).contains("locked"))
        let locked = try tool.run(["get", "--service", "s", "--account", "a"])
        #expect(locked.status == 6 && locked.stderr.contains("not unlocked") && locked.stderr.contains(Self.variable))
        #expect(text(try tool.run(["lock"])).contains("was not unlocked"))

        // rekey drops the key.
        #expect(try withPassphrase.run(["unlock"]).status == 0)
        var newEnv = withPassphrase.environment
        newEnv["NEW_PASS"] = "battery staple"
        #expect(try Tool(environment: newEnv).run(["rekey", "--new-passphrase-env", "NEW_PASS"]).status == 0)
        #expect(try tool.run(["get", "--service", "s", "--account", "a"]).status == 6, "the old key is gone")
        newEnv[Self.variable] = "battery staple"
        // The timeout: after it the store is locked again.
        #expect(try Tool(environment: newEnv).run(["unlock", "--for", "1s"]).status == 0)
        Thread.sleep(forTimeInterval: 2.5)
        #expect(try tool.run(["get", "--service", "s", "--account", "b"]).status == 6)
    }

    @Test("unlock on a terminal asks for the store passphrase without echo; bad durations and backends are usage errors")
    func unlockAtTerminal() throws {
        let (tool, withPassphrase) = try stores()
        defer { _ = try? tool.run(["lock"]) }
        #expect(try withPassphrase.run(["add", "--service", "s", "--account", "a"], stdin: Data("value".utf8)).status == 0)
        let term = try PseudoTerminal(try Tool.path(), ["unlock", "--for", "5m"], environment: tool.environment)
        #expect(term.waitFor("Store passphrase: "), "screen: \(term.text)")
        term.type("correct horse\n")
        let end = term.wait()
        if end.exit == 0 {
            #expect(!term.text.contains("correct horse"))
            #expect(try tool.run(["get", "--service", "s", "--account", "a"]).stdout == Data("value".utf8))
        } else {
            #expect(term.text.contains("keyring"), "screen: \(term.text)")
        }
        for bad in ["0", "0s", "25h", "2d", "abc", "-5m", "10x", "1.5h", ""] {
            #expect(try withPassphrase.run(["unlock", "--for", bad]).status == 2, "--for \(bad)")
        }
        #expect(try withPassphrase.run(["unlock", "--for"]).status == 2)
        let memory = try withPassphrase.run(["--backend", "memory", "unlock"])
        #expect(memory.status == 2 && memory.stderr.contains("sqlite"))
        let keyFile = try Tool.sqlite()
        #expect(try keyFile.run(["add", "--service", "s", "--account", "a"], stdin: Data("pw".utf8)).status == 0)
        #expect(try keyFile.run(["unlock"]).status == 2, "a key-file store has nothing to unlock")
    }
}
