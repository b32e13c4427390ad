import Foundation
import Testing
import TestSupport

/// Each safety idea applied to every place it belongs (issue 28): key material taken as exact bytes, files the
/// tool writes built aside and linked into place, configs checked, causes named. Each test fails on the code
/// before that issue. The tests run as root: "another user" is uid 65534 (setpriv).
@Suite("securestore: each safety idea everywhere it belongs")
struct SafetyIdeasTests {
    typealias Scratch = FileSafetyCLITests.Scratch

    struct Shell {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs `script` with `/bin/sh -c`; `$SS` is the tool. The script can make environment values with bytes
    /// that are not UTF-8 (`printf '\377'`), which a Swift environment dictionary cannot hold.
    static func sh(_ script: String, in s: Scratch, environment extra: [String: String] = [:]) throws -> Shell {
        let tool = try builtExecutable("securestore")
        var env = ProcessInfo.processInfo.environment
        for k in ["SECURESTORE_CONFIG", "SECURESTORE_BACKEND", "SECURESTORE_EXPORT_PASSPHRASE", "P", "Q", "DISPLAY"] { env[k] = nil }
        env["SS"] = tool
        (env["HOME"], env["XDG_DATA_HOME"], env["XDG_CONFIG_HOME"]) = (s.path("home"), s.path("home/data"), s.path("home/config"))
        for (k, v) in extra { env[k] = v }
        let out = s.path(".sh-out-\(UUID().uuidString)"), err = s.path(".sh-err-\(UUID().uuidString)")
        defer { unlink(out); unlink(err) }
        // `exec` redirects the shell's own streams (a `{ } 2>err` would keep the test process's stderr open in a
        // saved descriptor, and a process the script left behind would hold `swift test`'s pipe open).
        guard let pid = spawn("/bin/sh", ["-c", "exec >\(out) 2>\(err) </dev/null; cd \(s.dir) && { \(script) ; }"],
                              environment: env, stdout: nil) else {
            throw CocoaError(.executableLoad)
        }
        let status = reap(pid, timeout: .seconds(300))
        return Shell(status: status,
                     stdout: String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self),
                     stderr: String(decoding: FileManager.default.contents(atPath: err) ?? Data(), as: UTF8.self))
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    // MARK: Key material

    @Test("a passphrase variable whose bytes are not UTF-8 is refused (exit 2) for the store (passphraseEnv), the export (SECURESTORE_EXPORT_PASSPHRASE) and rekey --new-passphrase-env: no two byte strings give one passphrase, nothing is created")
    func passphraseBytesAreStrict() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        _ = try s.config("p.json", #"{"backend": "sqlite", "sqlite": {"path": "\#(s.path("p.db"))", "passphraseEnv": "P"}}"#)
        let bad = #"P="$(printf 'pass\377\376word')""#
        let add = try Self.sh("printf secret | env \(bad) \"$SS\" --config p.json add --service s --account a", in: s)
        #expect(add.status == 2 && add.stderr.contains("UTF-8") && add.stderr.contains("P"), "\(add.status) \(add.stderr)")
        #expect(!Self.exists(s.path("p.db")), "a store was created with a lossy passphrase")
        // A good passphrase makes the store; a lossy one that decodes to the same text does not open it.
        let good = try Self.sh("printf secret | P='pass word' \"$SS\" --config p.json add --service s --account a", in: s)
        #expect(good.status == 0, "\(good.stderr)")
        let other = try Self.sh("env \(bad) \"$SS\" --config p.json get --service s --account a", in: s)
        #expect(other.status == 2 && other.stdout.isEmpty, "\(other.status) \(other.stderr)")
        let export = try Self.sh("env P='pass word' SECURESTORE_EXPORT_PASSPHRASE=\"$(printf 'x\\377\\370y')\" "
            + "\"$SS\" --config p.json export --output out.db", in: s)
        #expect(export.status == 2 && export.stderr.contains("SECURESTORE_EXPORT_PASSPHRASE"), "\(export.status) \(export.stderr)")
        #expect(!Self.exists(s.path("out.db")))
        let rekey = try Self.sh("env P='pass word' Q=\"$(printf '\\200\\201')\" \"$SS\" --config p.json rekey --new-passphrase-env Q", in: s)
        #expect(rekey.status == 2 && rekey.stderr.contains("Q"), "\(rekey.status) \(rekey.stderr)")
        let still = try Self.sh("P='pass word' \"$SS\" --config p.json get --service s --account a", in: s)
        #expect(still.status == 0 && still.stdout == "secret", "\(still.stderr)")
    }

    // MARK: Files the tool writes

    /// A store of `count` items (`s1`…, secret `v1`…, each `size` bytes) at `c.json` (a key file).
    static func filledStore(_ s: Scratch, count: Int = 5, size: Int = 0) throws {
        _ = try s.sqlite()
        let pad = size > 0 ? " ; head -c \(size) /dev/zero | tr '\\0' x" : ""
        let made = try sh("for i in $(seq 1 \(count)); do { printf \"v$i\"\(pad) ; } | \"$SS\" --config c.json add "
            + "--service \"s$i\" --account a || exit 1; done", in: s)
        #expect(made.status == 0, "\(made.stderr)")
    }

    @Test("export onto a full disk (a file-size limit) fails and leaves nothing at --output, no temporary file either, so a retry works; the retry imports every item")
    func exportIsLinkedIntoPlaceOnlyWhenComplete() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        try Self.filledStore(s, count: 5, size: 300_000)
        let env = ["SECURESTORE_EXPORT_PASSPHRASE": "export pass"]
        let full = try Self.sh("ulimit -f 400; \"$SS\" --config c.json export --output out.db", in: s, environment: env)
        #expect(full.status != 0, "the export fit: \(full.stderr)")
        #expect(!Self.exists(s.path("out.db")), "a failed export left a file at --output: \(full.stderr)")
        #expect(FileSafetyCLITests.entries(s.dir).filter { $0.contains("out.db") }.isEmpty, "\(FileSafetyCLITests.entries(s.dir))")
        let retry = try Self.sh("\"$SS\" --config c.json export --output out.db", in: s, environment: env)
        #expect(retry.status == 0, "\(retry.stderr)")
        _ = try s.config("t.json", #"{"backend": "sqlite", "sqlite": {"path": "\#(s.path("t.db"))", "keyFile": "\#(s.path("t.key"))"}}"#)
        let imported = try Self.sh("\"$SS\" --config t.json import --input out.db", in: s, environment: env)
        #expect(imported.status == 0 && imported.stdout.contains("imported 5 item(s)"), "\(imported.stdout) \(imported.stderr)")
    }

    @Test("an export is sealed as a whole and stretched with Argon2id's moderate costs: a deleted, reordered or replayed row, or a removed seal (an unsealed export), is refused with exit 5 and nothing is imported")
    func exportIsSealedAsAWhole() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        try Self.filledStore(s)
        let env = ["SECURESTORE_EXPORT_PASSPHRASE": "export pass"]
        let export = try Self.sh("\"$SS\" --config c.json export --output out.db", in: s, environment: env)
        #expect(export.status == 0, "\(export.stderr)")
        let kdf = try Self.sh("sqlite3 out.db \"SELECT hex(v) FROM meta WHERE k = 'kdf'\"", in: s)
        // alg 1 ‖ opslimit 3 ‖ memlimit 256 MiB (libsodium's MODERATE)
        #expect(kdf.stdout.hasPrefix("01" + "0000000000000003" + "0000000010000000"), "\(kdf.stdout)")
        _ = try s.config("t.json", #"{"backend": "sqlite", "sqlite": {"path": "\#(s.path("t.db"))", "keyFile": "\#(s.path("t.key"))"}}"#)
        let tampering = [
            "deleted": "DELETE FROM items WHERE id = 3",
            "reordered": "UPDATE items SET id = -id WHERE id IN (1, 2); UPDATE items SET id = 2 WHERE id = -1; UPDATE items SET id = 1 WHERE id = -2",
            "replayed": "DROP INDEX items_ref; DROP INDEX items_ukey; INSERT INTO items SELECT 9, cls, ref, ukey, svc, acct, blob, secret, mdat FROM items WHERE id = 2",
            "unsealed": "DELETE FROM meta WHERE k = 'seal'",
        ]
        for (what, sql) in tampering.sorted(by: { $0.key < $1.key }) {
            let copy = "\(what).db"
            let made = try Self.sh("cp out.db \(copy) && sqlite3 \(copy) \"\(sql)\"", in: s)
            #expect(made.status == 0, "\(what): \(made.stderr)")
            let imported = try Self.sh("\"$SS\" --config t.json import --input \(copy)", in: s, environment: env)
            #expect(imported.status == 5, "\(what): \(imported.status) \(imported.stdout) \(imported.stderr)")
            #expect(imported.stderr.contains("seal"), "\(what): \(imported.stderr)")
        }
        let none = try Self.sh("\"$SS\" --config t.json find", in: s)
        #expect(none.status == 1, "something was imported: \(none.stdout)")
        let whole = try Self.sh("\"$SS\" --config t.json import --input out.db", in: s, environment: env)
        #expect(whole.status == 0 && whole.stdout.contains("imported 5 item(s)"), "\(whole.stdout) \(whole.stderr)")
    }

    @Test("a store file replaced by another copy of the store while an add waits for the write lock is detected: the add fails saying so, and the copy keeps its items, none lost")
    func storeReplacedUnderWaitingWriter() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        try Self.filledStore(s)   // store.db: s1…s5
        // (The WAL checkpointed first, so the copy holds the 5 items in its own file.)
        let copy = try Self.sh("sqlite3 store.db 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null && cp store.db copy.db "
                               + "&& \"$SS\" --config c.json clear --yes", in: s)   // store.db: empty
        #expect(copy.status == 0, "\(copy.stderr)")
        // A writer holds the lock until `go` exists; the add opens the store and waits; once its SQLite connection
        // has the file open (the shared-memory file is opened with it, not by the checks before),
        // the copy (5 items) is moved over the path and the lock released. Ordered by events, not by sleeps; every wait
        // gives up after 60 s, so nothing outlives the test. The holder waits for the lock (`.timeout`): a probe of
        // the lock that holds it for an instant must not make the holder's BEGIN fail and leave the store unlocked.
        let script = #"""
            ( printf '.timeout 60000\nBEGIN IMMEDIATE;\n.shell n=0; while [ ! -e go ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done\nCOMMIT;\n' | sqlite3 store.db ) &
            holder=$!
            n=0; until ! sqlite3 store.db 'BEGIN IMMEDIATE; ROLLBACK;' 2>/dev/null || [ $n -ge 1200 ]; do sleep 0.05; n=$((n+1)); done
            printf new | "$SS" --config c.json add --service new --account a 2>add.err & add=$!
            n=0; until ls -l /proc/$add/fd 2>/dev/null | grep -q 'store.db-shm$' || [ $n -ge 3000 ]; do sleep 0.02; n=$((n+1)); done   # its SQLite connection
            mv copy.db store.db
            touch go
            wait $add; echo "add=$?"
            wait $holder
            """#
        let run = try Self.sh(script, in: s)
        let addError = String(decoding: FileManager.default.contents(atPath: s.path("add.err")) ?? Data(), as: UTF8.self)
        #expect(!run.stdout.contains("add=0"), "the add reported success into a file that is no longer the store: \(run.stdout) \(addError)")
        #expect(addError.contains("replaced"), "\(addError)")
        let found = try Self.sh("\"$SS\" --config c.json find", in: s)
        #expect(found.stdout.split(separator: "\n").count == 5, "\(found.stdout) \(found.stderr)")
    }

    @Test("\"path\": \":memory:\" and \"path\": \"\" (and an empty keyFile) are refused with exit 2 before anything is created")
    func memoryAndEmptyPathsAreRefused() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let configs = [
            "memory.json": #"{"backend": "sqlite", "sqlite": {"path": ":memory:", "keyFile": "\#(s.path("k1.key"))"}}"#,
            "empty.json": #"{"backend": "sqlite", "sqlite": {"path": "", "keyFile": "\#(s.path("k2.key"))"}}"#,
            "emptykey.json": #"{"backend": "sqlite", "sqlite": {"path": "\#(s.path("k3.db"))", "keyFile": ""}}"#,
        ]
        for (name, json) in configs.sorted(by: { $0.key < $1.key }) {
            _ = try s.config(name, json)
            let before = FileSafetyCLITests.entries(s.dir)
            let add = try Self.sh("printf x | \"$SS\" --config \(name) add --service s --account a", in: s)
            #expect(add.status == 2, "\(name): \(add.status) \(add.stderr)")
            #expect(FileSafetyCLITests.entries(s.dir) == before, "\(name) created \(FileSafetyCLITests.entries(s.dir))")
        }
    }

    // MARK: Configs

    @Test("a config file that others can write or that another user owns is refused (exit 2) before any store is opened, like a key file")
    func configFileOwnerAndMode() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let config = try s.sqlite()
        chmod(config, 0o666)
        let writable = try Self.sh("printf x | \"$SS\" --config c.json add --service s --account a", in: s)
        #expect(writable.status == 2 && writable.stderr.contains("chmod go-w"), "\(writable.status) \(writable.stderr)")
        #expect(!Self.exists(s.path("store.db")))
        chmod(config, 0o644)
        chown(config, 65534, 65534)
        let foreign = try Self.sh("printf x | \"$SS\" --config c.json add --service s --account a", in: s)
        #expect(foreign.status == 2 && foreign.stderr.contains("another user"), "\(foreign.status) \(foreign.stderr)")
        #expect(!Self.exists(s.path("store.db")))
        chown(config, 0, 0)
        let fine = try Self.sh("printf x | \"$SS\" --config c.json add --service s --account a", in: s)
        #expect(fine.status == 0, "\(fine.stderr)")
    }

    @Test("a key given twice in a config file (top level or in a section, also spelled with an escape) is refused with exit 2, as the tool refuses an option given twice")
    func duplicateConfigKeys() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let cases = [
            #"{"backend": "sqlite", "backend": "memory"}"#,
            #"{"backend": "sqlite", "backen\u0064": "memory"}"#,
            #"{"backend": "sqlite", "sqlite": {"path": "\#(s.path("a.db"))", "path": "\#(s.path("b.db"))"}}"#,
        ]
        for json in cases {
            _ = try s.config("d.json", json)
            let add = try Self.sh("printf x | \"$SS\" --config d.json add --service s --account a", in: s)
            #expect(add.status == 2 && add.stderr.contains("twice"), "\(json): \(add.status) \(add.stderr)")
        }
    }

    @Test("relative path and keyFile in a config resolve against the config file's folder: one config is one store from every working folder")
    func relativePathsFollowTheConfigFile() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        for folder in ["conf", "work1", "work2"] { try FileManager.default.createDirectory(atPath: s.path(folder), withIntermediateDirectories: false) }
        _ = try s.config("conf/c.json", #"{"backend": "sqlite", "sqlite": {"path": "store.db", "keyFile": "store.key"}}"#)
        let add = try Self.sh("cd work1 && printf x | \"$SS\" --config ../conf/c.json add --service s --account a", in: s)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(Self.exists(s.path("conf/store.db")) && Self.exists(s.path("conf/store.key")))
        #expect(FileSafetyCLITests.entries(s.path("work1")).isEmpty)
        let get = try Self.sh("cd work2 && \"$SS\" --config \(s.path("conf/c.json")) get --service s --account a", in: s)
        #expect(get.status == 0 && get.stdout == "x", "\(get.stderr)")
    }

    @Test("SECURESTORE_BACKEND=memory over a config file that selects a persistent store is refused (exit 2): nothing is silently kept in memory only; --backend memory still chooses it on purpose")
    func environmentCannotMakeAConfigEphemeral() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        _ = try s.sqlite()
        let add = try Self.sh("printf x | \"$SS\" --config c.json add --service s --account a", in: s,
                              environment: ["SECURESTORE_BACKEND": "memory"])
        #expect(add.status == 2 && add.stderr.contains("SECURESTORE_BACKEND"), "\(add.status) \(add.stderr)")
        let explicit = try Self.sh("printf x | \"$SS\" --config c.json --backend memory add --service s --account a", in: s)
        #expect(explicit.status == 0, "\(explicit.stderr)")
    }

    @Test("a wrong-typed setting is a bad config (exit 2) even when there is no store yet, not \"There is no store\" (exit 1)")
    func badConfigBeforeNoStore() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        _ = try s.config("c.json", #"{"backend": "sqlite", "sqlite": {"path": "\#(s.path("store.db"))", "keyFile": "\#(s.path("store.key"))", "accessGroups": "one"}}"#)
        let get = try Self.sh("\"$SS\" --config c.json get --service s --account a", in: s)
        #expect(get.status == 2 && get.stderr.contains("accessGroups"), "\(get.status) \(get.stderr)")
    }

    @Test("securestore backends, a read-only report, starts no D-Bus session and creates nothing, even with DISPLAY set")
    func backendsStartsNothing() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        var env = ["DISPLAY": ":97"]
        env["DBUS_SESSION_BUS_ADDRESS"] = ""
        let report = try Self.sh("unset DBUS_SESSION_BUS_ADDRESS; \"$SS\" backends", in: s, environment: env)
        #expect(report.status == 0, "\(report.stderr)")
        #expect(!Self.exists(s.path("home")), "the report created \(FileSafetyCLITests.entries(s.path("home")))")
        // It says why instead of starting a bus to look (when the Secret Service is built in).
        let line = report.stdout.split(separator: "\n").first { $0.contains("secret-service") } ?? ""
        #expect(line.contains("not built in") || line.contains("DBUS_SESSION_BUS_ADDRESS is not set"), "\(report.stdout)")
    }

    /// A small keyctl(2) client (no keyutils package needed): `join CMD…` runs CMD in a new session keyring;
    /// `read DESCRIPTION` searches the session keyring for that user key and reads it (exit 3: not found, 4:
    /// not readable).
    static let keyctlScript = #"""
        import ctypes, os, sys, platform
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        NR = {"x86_64": 250, "aarch64": 219}[platform.machine()]
        def keyctl(*args):
            return libc.syscall(ctypes.c_long(NR), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
        if sys.argv[1] == "join":
            if keyctl(1, None) < 0: sys.exit(9)
            os.execvp(sys.argv[2], sys.argv[2:])
        key = keyctl(10, -3, ctypes.c_char_p(b"user"), ctypes.c_char_p(sys.argv[2].encode()), 0)
        if key < 0: sys.exit(3)
        buffer = ctypes.create_string_buffer(256)
        if keyctl(11, key, buffer, 256) < 0: sys.exit(4)
        sys.exit(0)
        """#

    @Test("the key unlock caches is readable by its own uid only: a second account sharing the session keyring (setpriv inside it) can neither find nor read it; with the passphrase variable exported, get still uses the cached key (no Argon2id: a wrong exported passphrase is not even stretched)")
    func cachedKeyIsOwnUidOnlyAndPreferred() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        _ = try s.config("p.json", #"{"backend": "sqlite", "sqlite": {"path": "\#(s.path("p.db"))", "passphraseEnv": "P"}}"#)
        try Data(Self.keyctlScript.utf8).write(to: URL(fileURLWithPath: s.path("keys.py")))
        let made = try Self.sh("printf secret | P=pw \"$SS\" --config p.json add --service s --account a", in: s)
        #expect(made.status == 0, "\(made.stderr)")
        let slot = "securestore:v1:" + (try Self.sh("python3 -c 'import hashlib,sys; print(hashlib.blake2b(b\"SecureStore keyring slot v1\\0sqlite \" + sys.argv[1].encode(), digest_size=16).hexdigest())' \"$(realpath p.db)\"", in: s).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines))
        let script = """
            P=pw "$SS" --config p.json unlock --for 60s || exit 10
            python3 keys.py read \(slot); echo "owner=$?"
            setpriv --reuid=65534 --regid=65534 --clear-groups python3 keys.py read \(slot); echo "other=$?"
            P=wrong "$SS" --config p.json get --service s --account a; echo " cached=$?"
            "$SS" --config p.json lock
            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: s.path("inside.sh")))
        let run = try Self.sh("python3 keys.py join sh inside.sh", in: s)
        #expect(run.stdout.contains("owner=0"), "the owner reads its cached key: \(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("other=3") || run.stdout.contains("other=4"), "another uid in the session: \(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("secret cached=0"), "\(run.stdout) \(run.stderr)")
    }

    @Test("a non-root process that cannot lock memory (ulimit -l 0) is warned before a store's keys are made, as the security model promises unswapped keys")
    func memoryLockWarning() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        try FileManager.default.createDirectory(atPath: s.path("u"), withIntermediateDirectories: false)
        chown(s.path("u"), 65534, 65534)
        chmod(s.path("u"), 0o700)
        _ = try s.config("u.json", #"{"backend": "sqlite", "sqlite": {"path": "\#(s.path("u/store.db"))", "keyFile": "\#(s.path("u/store.key"))"}}"#)
        let run = try Self.sh("ulimit -l 0 && printf x | setpriv --reuid=65534 --regid=65534 --clear-groups \"$SS\" --config u.json add --service s --account a", in: s)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("memory cannot be locked"), "\(run.stderr)")
    }

    // MARK: Outcomes and causes

    @Test("a PostgreSQL URL with a value libpq does not know (sslmode=bogus) is a bad config, exit 2, not an unreachable server (exit 6)")
    func postgresBadSettingIsConfig() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        _ = try s.config("pg.json", #"{"backend": "postgres", "postgres": {"url": "postgresql://u@127.0.0.1:1/db?sslmode=bogus", "keyFile": "\#(s.path("pg.key"))"}}"#)
        let get = try Self.sh("\"$SS\" --config pg.json get --service s --account a", in: s)
        #expect(get.status == 2 && get.stderr.contains("sslmode"), "\(get.status) \(get.stderr)")
    }

    @Test("Ctrl-Z at the passphrase or secret prompt gives the terminal its echo back while the tool is stopped")
    func suspendAtPromptRestoresEcho() throws {
        let tool = try Tool.sqlite()
        var env = tool.environment
        env["SS"] = try Tool.path()
        // A job-control shell in the terminal's session runs the tool as a job (as an interactive shell does);
        // when the job stops, the shell goes on and shows the terminal's settings.
        let term = try PseudoTerminal("/bin/sh", ["-c", #"set -m; "$SS" add --service tty --account me; stty -a; echo "stty-ended"; sleep 5"#],
                                      environment: env)
        #expect(term.waitFor("Secret for tty/me: "), "\(term.text)")
        usleep(200_000)
        term.type("\u{1A}")
        // The whole of stty's output (the job stopped, so the shell went on), before it is read.
        #expect(term.waitFor("stty-ended\r\n") || term.waitFor("stty-ended\n"), "stty ran after the stop: \(term.text)")
        let text = term.text
        let stty = text.range(of: "speed").map { String(text[$0.lowerBound...]) } ?? ""
        #expect(stty.contains(" echo ") && !stty.contains("-echo "), "echo while the tool is stopped: \(stty)")
        _ = term.wait(timeout: .seconds(10))
    }

    @Test("on a 100 % full disk, get and find still read the store (read-only, nothing written) and add says the disk is full, instead of \"disk I/O error\" for all three")
    func fullDiskReadsAndNamesTheCause() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let script = """
            mkdir m && mount -t tmpfs -o size=2m tmpfs m || { echo nomount; exit 0; }
            trap 'umount m' EXIT
            printf '{"backend":"sqlite","sqlite":{"path":"%s/m/s.db","keyFile":"%s/m/s.key"}}' "$PWD" "$PWD" > m.json
            printf secret | "$SS" --config m.json add --service s --account a || exit 11
            dd if=/dev/zero of=m/fill bs=4k 2>/dev/null
            "$SS" --config m.json get --service s --account a; echo " get=$?"
            "$SS" --config m.json find >/dev/null; echo "find=$?"
            printf x | "$SS" --config m.json add --service t --account a; echo "add=$?"
            """
        let run = try Self.sh(script, in: s)
        if run.stdout.contains("nomount") {   // no tmpfs mount here (not root): nothing to fill
            if ProcessInfo.processInfo.environment["SECURESTORE_REQUIRE_ALL_BACKENDS"] == "1" { Issue.record("cannot mount a tmpfs to fill") }
            else { print("[full disk] skipped: cannot mount a tmpfs (needs root)") }
            return
        }
        #expect(run.stdout.contains("secret get=0") && run.stdout.contains("find=0"), "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("add=70") && run.stderr.contains("full"), "\(run.stdout) \(run.stderr)")
        #expect(!run.stderr.contains("disk I/O error") || run.stderr.contains("full"), "\(run.stderr)")
    }

    @Test("where the file system refuses locks (ENOLCK, as some NFS mounts), a write says so at once instead of waiting out the busy timeout and blaming another process (locks refused by an LD_PRELOAD shim; the answer does not wait: no timing, the message names the cause)")
    func locksUnsupportedNamed() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        try Self.filledStore(s, count: 1)
        let shim = #"""
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <errno.h>
            #include <fcntl.h>
            #include <stdarg.h>
            static int refuse(int cmd) { return cmd == F_GETLK || cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_GETLK || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW; }
            #define SHIM(name) int name(int fd, int cmd, ...) { va_list ap; va_start(ap, cmd); void *arg = va_arg(ap, void *); va_end(ap); \
                if (refuse(cmd)) { errno = ENOLCK; return -1; } \
                int (*real)(int, int, ...) = (int (*)(int, int, ...))dlsym(RTLD_NEXT, #name); return real(fd, cmd, arg); }
            SHIM(fcntl)
            SHIM(fcntl64)
            """#
        try Data(shim.utf8).write(to: URL(fileURLWithPath: s.path("nolock.c")))
        let built = try Self.sh("cc -shared -fPIC -o nolock.so nolock.c -ldl", in: s)
        guard built.status == 0 else {   // no C compiler here: nothing to inject (the README's test command has one)
            if ProcessInfo.processInfo.environment["SECURESTORE_REQUIRE_ALL_BACKENDS"] == "1" { Issue.record("no C compiler: \(built.stderr)") }
            else { print("[ENOLCK] skipped: no C compiler to build the lock-refusing shim") }
            return
        }
        let add = try Self.sh("printf x | LD_PRELOAD=\(s.path("nolock.so")) \"$SS\" --config c.json add --service t --account a", in: s)
        #expect(add.status == 6 && add.stderr.contains("ENOLCK"), "\(add.status) \(add.stderr)")
        #expect(!add.stderr.contains("busy"), "\(add.stderr)")
    }
}
