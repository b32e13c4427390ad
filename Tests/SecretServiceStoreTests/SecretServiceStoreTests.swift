import Testing
import Foundation
import SecureStoreCore
import SecureStoreSecretService
import TestSupport

/// The Secret Service backend against a real provider: gnome-keyring under `scripts/with-keyring.sh`, KeePassXC under
/// `scripts/with-keepassxc.sh` (scripts/test.sh runs these suites under both).
/// Tests that kill or lock the daemon run the probe executable in a private bus of their own, so they
/// never disturb the daemon other tests use.
@Suite("SecretService", .serialized, .timeLimit(.minutes(2)), .requires(.secretService))
struct SecretServiceStoreTests {
    static func requireBus() throws {
        guard ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] != nil else {
            Issue.record("No D-Bus session bus: run these tests as `scripts/with-keyring.sh swift test --skip-build --filter SecretService`.")
            throw SecureStoreError(.notAvailable, "no session bus")
        }
    }

    static func freshStore() throws -> SecretServiceStore {
        try requireBus()
        return try SecretServiceStore(namespace: "tests-\(UInt64.random(in: 0...UInt64.max))")
    }

    struct Output { var status: Int32; var stdout: String }

    /// Runs a command (through `env` and `timeout`, output to a temporary file) and waits for it.
    ///
    /// Not Foundation's `Process`: its wait also waits for descriptors that a daemon started by the child
    /// (gnome-keyring-daemon --replace) inherits, which hangs. `system` waits for the shell only.
    static func run(_ arguments: [String], environment extra: [String: String?] = [:], seconds: Int = 60) throws -> Output {
        func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ss-test-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: file) }
        var words = ["cd", quote(packageRoot.path), "&&", "exec", "env"]
        for (k, v) in extra.sorted(by: { $0.key < $1.key }) where v == nil { words += ["-u", quote(k)] }
        for (k, v) in extra.sorted(by: { $0.key < $1.key }) { if let v { words.append(quote("\(k)=\(v)")) } }
        words += ["timeout", String(seconds)] + arguments.map(quote)
        words += [">", quote(file.path), "2>/dev/null", "</dev/null"]
        let status = spawnShell(words.joined(separator: " "))
        let stdout = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return Output(status: (status >> 8) & 0xFF, stdout: stdout)
    }

    /// `/bin/sh -c command` with an empty signal mask and default handlers, then waits for it. (Test
    /// threads block SIGTERM & co.; a child inheriting that mask leaves a dbus-daemon that cannot be
    /// terminated, and `timeout` cannot stop it.) Returns the raw wait status.
    static func spawnShell(_ command: String) -> Int32 {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attr, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
        let envp: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid = pid_t()
        guard posix_spawn(&pid, "/bin/sh", nil, &attr, argv, envp) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    static var probe: String {
        builtExecutablePath("securestore-secretservice-probe")
            ?? packageRoot.appendingPathComponent(".build/debug/securestore-secretservice-probe").path
    }

    /// `step NAME ok MS` / `step NAME error CODE MS MESSAGE` lines of a probe run, by step name.
    static func steps(_ output: String) -> [String: (code: String, ms: Int, message: String)] {
        var out: [String: (code: String, ms: Int, message: String)] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("step ") {
            let parts = line.split(separator: " ", maxSplits: 5).map(String.init)
            guard parts.count >= 4 else { continue }
            if parts[2] == "ok" {
                out[parts[1]] = ("ok", Int(parts[3]) ?? -1, "")
            } else if parts.count >= 5 {
                out[parts[1]] = (parts[3], Int(parts[4]) ?? -1, parts.count > 5 ? parts[5] : "")
            }
        }
        return out
    }

    /// The script that starts the provider these tests run on in a private bus: KeePassXC under
    /// scripts/with-keepassxc.sh, gnome-keyring otherwise.
    static var providerScript: String {
        packageRoot.appendingPathComponent(ProcessInfo.processInfo.environment["SECURESTORE_SECRET_SERVICE_PROVIDER"] == "keepassxc"
            ? "scripts/with-keepassxc.sh" : "scripts/with-keyring.sh").path
    }

    /// A probe scenario in a private bus with its own unlocked provider (the one these tests run on).
    static func privateBusProbe(_ scenario: String) throws -> [String: (code: String, ms: Int, message: String)] {
        try privateBusProbeOutput(scenario).steps
    }

    static func privateBusProbeOutput(_ scenario: String) throws
        -> (steps: [String: (code: String, ms: Int, message: String)], measures: [String: String])
    {
        let output = try run([providerScript, probe, scenario], environment: ["SECURESTORE_IN_KEYRING_BUS": nil])
        var measures: [String: String] = [:]
        for line in output.stdout.split(separator: "\n") where line.hasPrefix("measure ") {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            if parts.count == 3 { measures[parts[1]] = parts[2] }
        }
        return (steps(output.stdout), measures)
    }

    @Test("the provider is named from the bus: the running one, or none with activation possible, starting nothing")
    func providerNamed() throws {
        let running = try Self.run([Self.providerScript, Self.probe, "provider"], environment: ["SECURESTORE_IN_KEYRING_BUS": nil])
        let expected = onKeePassXC ? "provider KeePassXC (keepassxc, pid " : "provider GNOME Keyring (gnome-keyring-daemon, pid "
        #expect(running.stdout.contains(expected), "\(running.stdout)")
        // A bus where nothing owns org.freedesktop.secrets (gnome-keyring's service file makes it activatable).
        let none = try Self.run(["dbus-run-session", "--", Self.probe, "provider"], environment: ["SECURESTORE_IN_KEYRING_BUS": nil])
        #expect(none.stdout.contains("provider no Secret Service is running (D-Bus activation would start one on first use)"),
                "\(none.stdout)")
        #expect(none.stdout.contains("owned false"), "asking started a provider: \(none.stdout)")
    }

    @Test("reads read only what they need: listings and attribute-only queries make no GetSecrets call, a data lookup one")
    func attributeReadsMakeNoGetSecrets() throws {
        let (steps, measures) = try Self.privateBusProbeOutput("secretReads")
        #expect(steps["reads"] == nil, "\(String(describing: steps["reads"]))")
        #expect(measures["attributeReads"] == "0", "\(measures)")
        #expect(measures["afterDataRead"] == "1", "\(measures)")
    }

    @Test("an item stored through the backend is read by secret-tool lookup")
    func interopSecretToolReadsOurs() throws {
        let store = try Self.freshStore()
        defer { _ = try? store.clear() }
        let service = "interop-\(UInt32.random(in: 0...UInt32.max))"
        try store.add(NewItem(.genericPassword, [.service: .string(service), .account: "alice"],
                              data: Data("s3cret-value".utf8)))
        let out = try Self.run(["secret-tool", "lookup", "service", service, "account", "alice"])
        #expect(out.status == 0)
        #expect(out.stdout == "s3cret-value")
    }

    @Test("items of other applications are never returned, changed or cleared")
    func isolationFromForeignItems() throws {
        let store = try Self.freshStore()
        let service = "foreign-\(UInt32.random(in: 0...UInt32.max))"
        let stored = try Self.run(["sh", "-c", "printf 'foreign-secret' | secret-tool store --label x service \(service) account A"])
        #expect(stored.status == 0)
        try store.add(NewItem(.genericPassword, [.service: .string(service), .account: "B"], data: Data("ours".utf8)))
        let all = try store.items(matching: ItemQuery(.genericPassword, [.service: .string(service)], limit: .all,
                                                   returning: [.attributes, .data]))
        #expect(all.count == 1)
        #expect(all.first?.data == Data("ours".utf8))
        #expect(try store.items(matching: ItemQuery(.genericPassword, [.service: .string(service), .account: "A"])).isEmpty)
        #expect(try store.clear() == 1)
        let lookup = try Self.run(["secret-tool", "lookup", "service", service, "account", "A"])
        #expect(lookup.stdout == "foreign-secret")
        _ = try Self.run(["secret-tool", "clear", "service", service, "account", "A"])
    }

    @Test("two stores with different namespaces do not see each other")
    func namespacesAreSeparate() throws {
        let a = try Self.freshStore()
        let b = try Self.freshStore()
        defer { _ = try? a.clear(); _ = try? b.clear() }
        let attrs: [AttributeName: AttributeValue] = [.service: "shared", .account: "same"]
        try a.add(NewItem(.genericPassword, attrs, data: Data("a".utf8)))
        try b.add(NewItem(.genericPassword, attrs, data: Data("b".utf8)))   // no duplicate across namespaces
        #expect(try a.password(service: "shared", account: "same") == Data("a".utf8))
        #expect(try b.password(service: "shared", account: "same") == Data("b".utf8))
        #expect(try a.clear() == 1)
        #expect(try b.password(service: "shared", account: "same") == Data("b".utf8))
    }

    @Test("records round-trip exactly: string vs data, dates to the bit, order kept by update")
    func roundTripAndOrder() throws {
        let store = try Self.freshStore()
        defer { _ = try? store.clear() }
        let odd = "nul\u{0}inside \u{FFFE}"
        try store.add(NewItem(.genericPassword, [.service: .string(odd), .account: .data(Data([0xEF, 0xBB, 0xBF, 0x61])),
                                                 .generic: .data(Data([0, 1, 2, 255])), .creator: 42, .isInvisible: true],
                              data: Data([0, 0xFF])))
        try store.add(NewItem(.genericPassword, [.service: "second"]))
        try store.update(ItemQuery(.genericPassword, [.service: .string(odd)]),
                         with: ItemChanges([.label: "relabelled"], data: Data("new".utf8)))
        let all = try store.items(matching: ItemQuery(.genericPassword, limit: .all, returning: [.attributes, .data]))
        #expect(all.count == 2)
        let first = try #require(all.first)
        #expect(first.attributes?[.service] == .string(odd))
        #expect(first.attributes?[.account] == .data(Data([0xEF, 0xBB, 0xBF, 0x61])))
        #expect(first.attributes?[.generic] == .data(Data([0, 1, 2, 255])))
        #expect(first.attributes?[.creator] == .number(42))
        #expect(first.attributes?[.isInvisible] == .bool(true))
        #expect(first.attributes?[.label] == .string("relabelled"))
        #expect(first.data == Data("new".utf8))
        let dates = Date(timeIntervalSinceReferenceDate: 1.0000000000000002)
        let pinned = try SecretServiceStore(namespace: "tests-date-\(UInt64.random(in: 0...UInt64.max))",
                                            configuration: StoreConfiguration(clock: { dates }))
        defer { _ = try? pinned.clear() }
        try pinned.add(NewItem(.key, [.keyClass: 1]))
        let key = try pinned.items(matching: ItemQuery(.key, returning: .attributes))
        #expect(key.first?.attributes?[.creationDate] == .date(dates))
    }

    @Test("a collection that does not exist: every first read and write of a connection is notAvailable naming it, never an empty result; nothing is created")
    func missingCollection() throws {
        try Self.requireBus()
        let number = UInt32.random(in: 0...UInt32.max)
        let namespace = "tests-\(UInt64.random(in: 0...UInt64.max))"
        let query = ItemQuery(.genericPassword, [.service: "s", .account: "a"])
        // A name that could be a collection's, and one that cannot (not an object path element).
        for name in ["securestore_missing_\(number)", "securestore-missing-\(number)"] {
        for attempt in 0..<2 {   // a reader's first transaction, then a writer's, each on a new connection
            let store = try SecretServiceStore(collection: name, namespace: namespace)
            let result = Result { () throws(SecureStoreError) in
                if attempt == 0 { _ = try store.items(matching: query) } else { try store.add(NewItem(.genericPassword, [.service: "s", .account: "a"])) }
            }
            guard case .failure(let error) = result else {
                Issue.record("attempt \(attempt): no error for a missing collection")
                continue
            }
            #expect(error.code == .notAvailable, "attempt \(attempt): \(error)")
            #expect(error.message.contains(name), "attempt \(attempt): \(error.message)")
        }
        }
        // Nor did the writes land in the default collection.
        let fallback = try SecretServiceStore(namespace: namespace)
        #expect(try fallback.items(matching: ItemQuery(.genericPassword, [.service: "s"], limit: .all)).isEmpty)
    }

    @Test("no session bus: notAvailable with the reason and how to start one")
    func noBus() throws {
        let dead = try Self.run([Self.probe, "basic"], environment: [
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/securestore-no-bus", "DISPLAY": nil])
        #expect(dead.status != 0)
        let open = Self.steps(dead.stdout)["open"]
        #expect(open?.code == "notAvailable")
        #expect(open?.message.contains("Secret Service not available") == true)
        #expect(open?.message.contains("gnome-keyring-daemon") == true)
        let unset = try Self.run([Self.probe, "basic"], environment: ["DBUS_SESSION_BUS_ADDRESS": nil, "DISPLAY": nil])
        #expect(Self.steps(unset.stdout)["open"]?.code == "notAvailable")
    }

    @Test("the provider stopped: a call hung until the D-Bus deadline holds only its store's one thread; 32 concurrent async lookups each answer within their 1 s timeout; another store keeps serving; a task ticking every 10 ms is not delayed")
    func asyncLookupsWhileStopped() throws {
        let output = try Self.run([Self.providerScript, Self.probe, "asyncStopped"],
                                  environment: ["SECURESTORE_IN_KEYRING_BUS": nil])
        let steps = Self.steps(output.stdout)
        var measures: [String: String] = [:]
        for line in output.stdout.split(separator: "\n") where line.hasPrefix("measure ") {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            if parts.count == 3 { measures[parts[1]] = parts[2] }
        }
        print("[secret-service async, daemon stopped] \(measures.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        #expect(steps["add"]?.code == "ok", "\(String(describing: steps["add"]))")
        #expect(measures["lookups"] == "32")
        #expect(measures["timedOut"] == "32", "a stopped daemon answers nothing: \(measures)")
        #expect(Int(measures["longestWaitMs"] ?? "") ?? .max < 2500, "each lookup answers near its 1 s timeout")
        #expect(Int(measures["maxTickGapMs"] ?? "") ?? .max < 200, "the ticking task was delayed")
        #expect(Int(measures["ticks"] ?? "") ?? 0 > 20)
        #expect(steps["afterContinue"]?.code == "ok", "\(String(describing: steps["afterContinue"]))")
        // The store's concurrency is 1 (one D-Bus connection): the hung call holds its one thread until the
        // backend's own deadline (5 s per round trip) ends it, and no longer; other stores keep serving.
        #expect(measures["poolSize"] == "1")
        #expect(measures["hungCode"] == "notAvailable", "\(measures)")
        let hung = Int(measures["hungMs"] ?? "") ?? 0
        #expect(hung >= 4500 && hung < 12_000, "ends at the D-Bus deadline: \(measures)")
        #expect(measures["otherOk"] == "120", "\(measures)")
        #expect((Int(measures["otherMs"] ?? "") ?? .max) < 2000, "another store's calls kept their pace (~0.2 s): \(measures)")
    }

    @Test("items changed, deleted and re-added by another store or process are read as they are now, never from a stale cache")
    func changesByOthersAreSeen() throws {
        let mine = try Self.freshStore()
        defer { _ = try? mine.clear() }
        let namespace = mine.backend.namespace
        func comment(_ account: String) throws -> String? {
            let found = try mine.items(matching: ItemQuery(.genericPassword, [.service: "cache", .account: .string(account)],
                                                           limit: .all, returning: [.attributes, .data]))
            #expect(found.count == 1, "\(account): \(found.count) items")
            return found.first?.attributes?[.comment]?.text
        }
        try mine.add(NewItem(.genericPassword, [.service: "cache", .account: "x", .comment: "mine"], data: Data("x".utf8)))
        try mine.add(NewItem(.genericPassword, [.service: "cache", .account: "y", .comment: "first"], data: Data("y".utf8)))
        #expect(try comment("x") == "mine" && comment("y") == "first")
        // Another store object (its own connection) in this process.
        let other = try SecretServiceStore(namespace: namespace)
        try other.update(ItemQuery(.genericPassword, [.service: "cache", .account: "x"]), with: ItemChanges([.comment: "other"]))
        #expect(try comment("x") == "other")
        // Another process.
        let out = try Self.run([Self.probe, "change", namespace], seconds: 60)
        #expect(out.stdout == "ok\n", "\(out.stdout)")
        #expect(try comment("x") == "from-peer")
        #expect(try comment("y") == "re-added")
        let all = try mine.items(matching: ItemQuery(.genericPassword, [.service: "cache"], limit: .all, returning: [.attributes, .data]))
        #expect(all.map { $0.attributes?[.account]?.text } == ["x", "y"] && all.map(\.data) == [Data("x".utf8), Data("y2".utf8)])
    }

    @Test("8 processes adding the same 20 keys to one namespace: exactly one winner per key (writers serialized by a lock file; one told the lock stayed busy too long tries again, as the error says)")
    func racingProcesses() throws {
        try Self.requireBus()
        let namespace = "tests-race-\(UInt64.random(in: 0...UInt64.max))"
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ss-race-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let script = (0..<8).map { "\(quote(Self.probe)) race \(quote(namespace)) 20 > \(quote(dir))/\($0).out 2>/dev/null &" }
            .joined(separator: " ") + " wait"
        _ = try Self.run(["/bin/sh", "-c", script], seconds: 120)
        var winners: [String: Int] = [:]
        for i in 0..<8 {
            let text = (try? String(contentsOfFile: "\(dir)/\(i).out", encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                #expect(words.first == "ok" || words.first == "dup", "process \(i): \(line)")
                if words.first == "ok", words.count > 1 { winners[String(words[1]), default: 0] += 1 }
            }
        }
        for k in 0..<20 { #expect(winners["k-\(k)"] == 1, "k-\(k): \(winners["k-\(k)"] ?? 0) winners") }
        let store = try SecretServiceStore(namespace: namespace)
        defer { _ = try? store.clear() }
        let all = try store.items(matching: ItemQuery(.genericPassword, limit: .all, returning: .attributes))
        #expect(all.count == 20, "one item per key in the keyring")
    }

    @Test("the writer lock file: 0600 in a 0700 folder under XDG_RUNTIME_DIR (else /tmp/securestore-UID); a folder others may use is refused, nothing written")
    func writerLockFile() throws {
        try Self.requireBus()
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("ss-runtime-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let namespace = "tests-lock-\(UInt64.random(in: 0...UInt64.max))"
        defer { _ = try? SecretServiceStore(namespace: namespace).clear() }
        let first = try Self.run([Self.probe, "race", namespace, "1"], environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(first.stdout == "ok k-0\n", "\(first.stdout)")
        func mode(_ path: String) -> mode_t {
            var info = stat()
            return lstat(path, &info) == 0 ? info.st_mode & 0o777 : 0
        }
        #expect(mode(runtime + "/securestore") == 0o700)
        let locks = (try? FileManager.default.contentsOfDirectory(atPath: runtime + "/securestore")) ?? []
        #expect(locks.count == 1 && locks.allSatisfy { $0.hasPrefix("secret-service-") && $0.hasSuffix(".lock") }, "\(locks)")
        for lock in locks { #expect(mode(runtime + "/securestore/" + lock) == 0o600) }
        chmod(runtime + "/securestore", 0o777)
        let refused = try Self.run([Self.probe, "race", namespace, "2"], environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(refused.stdout.contains("err k-1 authFailed") && refused.stdout.contains("chmod 700"), "\(refused.stdout)")
        let store = try SecretServiceStore(namespace: namespace)
        #expect(try store.items(matching: ItemQuery(.genericPassword, limit: .all, returning: .attributes)).count == 1,
                "the refused add wrote nothing")
    }

    @Test("the default access group is the one of every backend; items stored with the namespace group of earlier versions stay visible, changeable and deletable")
    func defaultAccessGroup() throws {
        try Self.requireBus()
        let namespace = "tests-groups-\(UInt64.random(in: 0...UInt64.max))"
        // An item stored by an earlier version: its default access group was the namespace.
        let earlier = try SecretServiceStore(namespace: namespace, configuration: StoreConfiguration(accessGroups: [namespace]))
        defer { _ = try? earlier.clear() }
        try earlier.add(NewItem(.genericPassword, [.service: "old", .account: "a"], data: Data("o".utf8)))
        let store = try SecretServiceStore(namespace: namespace)
        #expect(store.configuration.accessGroups == [StoreConfiguration.defaultAccessGroup, namespace])
        try store.add(NewItem(.genericPassword, [.service: "new", .account: "a"], data: Data("n".utf8)))
        let all = try store.items(matching: ItemQuery(.genericPassword, limit: .all, returning: [.attributes, .data]))
        var groups: [String: String] = [:]
        for item in all {
            if let service = item.attributes?[.service]?.text { groups[service] = item.attributes?[.accessGroup]?.text }
        }
        #expect(groups == ["old": namespace, "new": StoreConfiguration.defaultAccessGroup])
        try store.update(ItemQuery(.genericPassword, [.service: "old"]), with: ItemChanges(data: Data("changed".utf8)))
        #expect(try store.items(matching: ItemQuery(.genericPassword, [.service: "old"], returning: .data)).first?.data
                == Data("changed".utf8))
        try store.delete(ItemQuery(.genericPassword, [.service: "old"]))
        // The namespace that is the default group has just that group.
        #expect(SecretServiceStore.defaultAccessGroups(namespace: StoreConfiguration.defaultAccessGroup)
                == [StoreConfiguration.defaultAccessGroup])
    }
}
