import Foundation
import SecureStoreCore
import SecureStoreSecretService
import TestSupport
import CProbe

// A separate process for the Secret Service tests that must not share a process (libsecret/GIO cache the
// session bus connection per process) or a daemon (they kill or lock it) with other tests.
//
//   securestore-secretservice-probe basic    open a store, add, read, clear
//   securestore-secretservice-probe killed   kill gnome-keyring mid-run, expect an error, restart it, work again
//   securestore-secretservice-probe stopped  stop (SIGSTOP) gnome-keyring: a bounded notAvailable, then works again
//   securestore-secretservice-probe locked   lock the collection, expect interactionNotAllowed, restart unlocked
//   securestore-secretservice-probe change NAMESPACE  changes items x and y of service `cache` (for the cache test)
//   securestore-secretservice-probe race NAMESPACE COUNT   adds k-0 … k-(COUNT-1) to NAMESPACE, one line each:
//                                            `ok k-i`, `dup k-i` or `err k-i CODE MESSAGE` (for racing processes)
//   securestore-secretservice-probe provider   prints `provider DESCRIPTION` and `owned true|false`
//   securestore-secretservice-probe stopAtCreate   stop the daemon as CreateItem is sent: outcomeUnknown; after
//                                            SIGCONT, `measure existsAfter 1|0` tells what it did
//   securestore-secretservice-probe stopAtDelete   4 items; stop the daemon as the first Delete is sent:
//                                            outcomeUnknown, waited once; `measure remainingAfter N`
//   securestore-secretservice-probe killAtImport   import 30 items, kill -9 the daemon as the 10th CreateItem is
//                                            sent; restart it; import again: finishes (`measure added N`,
//                                            `measure count N`)
//   securestore-secretservice-probe asyncStopped  stop gnome-keyring; one async lookup without a timeout hangs
//                                            until the D-Bus deadline, 32 concurrent async lookups with a 1 s
//                                            timeout and 120 lookups on another store meanwhile, while a task ticks
//                                            every 10 ms; continue it, then works again
//
// Prints one line per step: `step NAME ok MS` or `step NAME error CODE MS MESSAGE`, and `measure NAME VALUE`
// lines. `killed` and `locked`
// expect a private bus with a gnome-keyring (run them under scripts/with-keyring.sh); they need
// SECURESTORE_KEYRING_PASSWORD to restart the daemon unlocked.

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let scenario = CommandLine.arguments.dropFirst().first ?? "basic"
let namespace = "probe-\(UInt64.random(in: 0...UInt64.max))"
var store: SecretServiceStore?

@discardableResult
func step(_ name: String, _ body: () throws(SecureStoreError) -> Void) -> Bool {
    let start = Date()
    do throws(SecureStoreError) {
        try body()
        say("step \(name) ok \(Int(Date().timeIntervalSince(start) * 1000))")
        return true
    } catch {
        say("step \(name) error \(error.code.name) \(Int(Date().timeIntervalSince(start) * 1000)) \(error.message)")
        return false
    }
}

func shell(_ command: String, capture: Bool = true) -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/sh")
    p.arguments = ["-c", command]
    guard capture else {
        // Foundation's Process waits for descriptors a daemonized grandchild inherits; system() only
        // waits for the shell.
        _ = system(command)
        return ""
    }
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    do { try p.run() } catch { return "" }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

func daemonOwnsName() -> Bool {
    shell("dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus "
          + "org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets").contains("boolean true")
}

func waitFor(_ wanted: Bool) {
    for _ in 0..<100 {
        if daemonOwnsName() == wanted { return }
        usleep(50_000)
    }
}

/// The PID of the process owning org.freedesktop.secrets on this bus (never found by name).
func daemonPID() -> Int32? {
    let reply = shell("dbus-send --session --dest=org.freedesktop.DBus --print-reply /org/freedesktop/DBus "
                      + "org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets")
    guard let range = reply.range(of: "uint32 ") else { return nil }
    return Int32(reply[range.upperBound...].prefix { $0.isNumber })
}

/// Restarts the provider unlocked: the command scripts/with-keyring.sh or scripts/with-keepassxc.sh exports
/// (gnome-keyring by default, as under with-keyring.sh); waits until its collection answers unlocked.
func restartUnlocked() {
    let command = ProcessInfo.processInfo.environment["SECURESTORE_SECRET_SERVICE_RESTART"]
        ?? "printf '%s' \"$SECURESTORE_KEYRING_PASSWORD\" | gnome-keyring-daemon --replace --unlock --components=secrets >/dev/null 2>&1"
    _ = shell(command, capture: false)
    waitFor(true)
    waitForCollection(locked: false)
}

/// Waits (up to 10 s) until the default collection is locked or unlocked as `locked` says.
func waitForCollection(locked: Bool) {
    let path = collectionPath()
    for _ in 0..<200 {
        if shell("dbus-send --session --print-reply --dest=org.freedesktop.secrets \(path) "
                 + "org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Collection string:Locked")
            .contains("boolean \(locked)") { return }
        usleep(50_000)
    }
}

/// The object path of the default collection (gnome-keyring's login, KeePassXC's database).
func collectionPath() -> String {
    let reply = shell("dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets "
                      + "org.freedesktop.Secret.Service.ReadAlias string:default")
    guard let range = reply.range(of: "object path \"") else { return "/org/freedesktop/secrets/collection/login" }
    return String(reply[range.upperBound...].prefix { $0 != "\"" })
}

let item = NewItem(.genericPassword, [.service: "probe", .account: "probe"], data: Data("x".utf8))
let query = ItemQuery(.genericPassword, [.service: "probe", .account: "probe"], returning: .data)

/// The daemon stopped: many concurrent async lookups each answer within their timeout, and an unrelated task
/// ticking every 10 ms is not delayed (the blocking D-Bus calls run on the store's own thread: its concurrency is 1).
func asyncStopped(namespace: String) async {
    let store: SecretServiceStore
    do throws(SecureStoreError) {
        store = try SecretServiceStore(namespace: namespace)
        try await store.add(item)
        say("step add ok 0")
    } catch {
        say("step add error \(error.code.name) 0 \(error.message)")
        return
    }
    guard let pid = daemonPID() else {
        say("step stop error notAvailable 0 no process owns org.freedesktop.secrets")
        return
    }
    // Whatever happens to this process, the daemon is continued within a minute.
    _ = shell("(sleep 60; kill -CONT \(pid)) </dev/null >/dev/null 2>&1 &", capture: false)
    kill(pid, SIGSTOP)
    let ticker = Ticker()
    let ticking = Task { await ticker.run() }
    let clock = ContinuousClock()
    // One call without a timeout takes the store's one thread (its concurrency is 1) and hangs until the
    // backend's own D-Bus deadline ends it.
    let hungStart = clock.now
    let hung = Task { () -> (String, Duration) in
        let error = await failure { () async throws(SecureStoreError) in _ = try await store.items(matching: query) }
        return (error?.code.name ?? "ok", clock.now - hungStart)
    }
    try? await Task.sleep(for: .milliseconds(100))
    // Meanwhile another store (calls of 5 ms on a pool of 4) serves 3 tasks × 40 lookups.
    let other = Task { () -> (Int, Duration) in
        let began = clock.now
        guard let slow = try? Keychain(backend: SlowBackend(delay: .milliseconds(5), concurrency: 4)) else { return (0, .zero) }
        _ = try? await slow.add(item)
        let ok = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    var ok = 0
                    for _ in 0..<40 where (try? await slow.item(matching: query)) != nil { ok += 1 }
                    return ok
                }
            }
            return await group.reduce(0, +)
        }
        return (ok, clock.now - began)
    }
    let start = clock.now
    let waits = await withTaskGroup(of: (String, Duration).self) { group in
        for _ in 0..<32 {
            group.addTask {
                let began = clock.now
                do throws(SecureStoreError) {
                    _ = try await store.items(matching: query, timeout: .seconds(1))
                    return ("ok", clock.now - began)
                } catch {
                    return (error.code.name, clock.now - began)
                }
            }
        }
        var all: [(String, Duration)] = []
        for await outcome in group { all.append(outcome) }
        return all
    }
    let (otherOk, otherTook) = await other.value
    let (hungCode, hungTook) = await hung.value   // the daemon is still stopped: the D-Bus deadline ends it
    let (maxGap, ticks) = ticker.stop()
    await ticking.value
    kill(pid, SIGCONT)
    func ms(_ d: Duration) -> Int { Int(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000) }
    say("measure otherOk \(otherOk)")
    say("measure otherMs \(ms(otherTook))")
    say("measure hungCode \(hungCode)")
    say("measure hungMs \(ms(hungTook))")
    say("measure poolSize \(store.threadPool?.size ?? -1)")
    say("measure lookups \(waits.count)")
    say("measure timedOut \(waits.filter { $0.0 == "notAvailable" }.count)")
    say("measure otherOutcomes \(waits.filter { $0.0 != "notAvailable" }.map(\.0).joined(separator: ","))")
    say("measure longestWaitMs \(ms(waits.map(\.1).max() ?? .zero))")
    say("measure allMs \(ms(clock.now - start))")
    say("measure ticks \(ticks)")
    say("measure maxTickGapMs \(ms(maxGap))")
    let began = clock.now
    do throws(SecureStoreError) {
        guard try await store.items(matching: query, timeout: .seconds(20)).first?.data == Data("x".utf8) else {
            throw SecureStoreError(.internalError, "wrong data after the daemon continued")
        }
        _ = try await store.clear(timeout: .seconds(20))
        say("step afterContinue ok \(ms(clock.now - began))")
    } catch {
        say("step afterContinue error \(error.code.name) \(ms(clock.now - began)) \(error.message)")
    }
}

/// Stops (or kills) the daemon as this process sends the `nth` call of `member`; continues it within a minute
/// whatever happens. Returns the daemon's pid.
func stop(at member: String, nth: Int = 1, signal: Int32 = SIGSTOP) -> Int32? {
    guard let pid = daemonPID() else { return nil }
    if signal == SIGSTOP { _ = shell("(sleep 60; kill -CONT \(pid)) </dev/null >/dev/null 2>&1 &", capture: false) }
    _ = ss_probe_stop_on(member, Int32(nth), pid, signal)
    return pid
}

func count(_ store: SecretServiceStore, _ service: String) throws(SecureStoreError) -> Int {
    try store.items(matching: ItemQuery(.genericPassword, [.service: .string(service)], limit: .all)).count
}

func faultScenario(_ name: String) {
    let store: SecretServiceStore
    do throws(SecureStoreError) { store = try SecretServiceStore(namespace: namespace) } catch {
        say("step open error \(error.code.name) 0 \(error.message)")
        return
    }
    switch name {
    case "stopAtCreate":
        step("add") { () throws(SecureStoreError) in try store.add(item) }
        let pid = stop(at: "CreateItem")
        step("stoppedAdd") { () throws(SecureStoreError) in
            try store.add(NewItem(.genericPassword, [.service: "probe", .account: "second"], data: Data("y".utf8)))
        }
        if let pid { kill(pid, SIGCONT) }
        usleep(300_000)
        step("afterContinue") { () throws(SecureStoreError) in
            let fresh = try SecretServiceStore(namespace: namespace)
            say("measure existsAfter \(try fresh.items(matching: ItemQuery(.genericPassword, [.service: "probe", .account: "second"])).count)")
            try fresh.clear()
        }
    case "stopAtDelete":
        step("add") { () throws(SecureStoreError) in
            for i in 0..<4 { try store.add(NewItem(.genericPassword, [.service: "doomed", .account: .string("d\(i)")])) }
        }
        let pid = stop(at: "Delete")
        step("stoppedDelete") { () throws(SecureStoreError) in _ = try store.delete(ItemQuery(.genericPassword, [.service: "doomed"])) }
        if let pid { kill(pid, SIGCONT) }
        usleep(300_000)
        step("afterContinue") { () throws(SecureStoreError) in
            let fresh = try SecretServiceStore(namespace: namespace)
            say("measure remainingAfter \(try count(fresh, "doomed"))")
            try fresh.clear()
        }
    default:   // killAtImport
        let records = (0..<30).map { i in
            ItemRecord(persistentRef: .random(), itemClass: .genericPassword,
                       attributes: [.service: "imported", .account: .string("i\(i)"), .accessGroup: .string(StoreConfiguration.defaultAccessGroup),
                                    .synchronizable: .bool(false), .accessible: "ak",
                                    .creationDate: .date(Date(timeIntervalSinceReferenceDate: 1e8)),
                                    .modificationDate: .date(Date(timeIntervalSinceReferenceDate: 1e8))],
                       data: Data("secret-\(i)".utf8))
        }
        step("warm") { () throws(SecureStoreError) in _ = try count(store, "imported") }
        _ = stop(at: "CreateItem", nth: 10, signal: SIGKILL)
        step("killedImport") { () throws(SecureStoreError) in _ = try store.importRecords(records) }
        restartUnlocked()
        step("secondImport") { () throws(SecureStoreError) in
            let fresh = try SecretServiceStore(namespace: namespace)
            say("measure before \(try count(fresh, "imported"))")
            say("measure added \(try fresh.importRecords(records))")
            say("measure count \(try count(fresh, "imported"))")
            guard try fresh.exportRecords() == records else { throw SecureStoreError(.internalError, "the items differ from the import") }
            try fresh.clear()
        }
    }
}

switch scenario {
case "provider":
    // Which program answers (read from the bus; starts nothing), and whether one owns the name afterwards.
    say("provider \(SecretServiceProvider.current()?.description ?? "unknown")")
    say("owned \(daemonOwnsName())")
case "secretReads":
    // How many GetSecrets calls reads make: listings and attribute queries none, a lookup of data one.
    do throws(SecureStoreError) {
        let store = try SecretServiceStore(namespace: namespace)
        for i in 0..<3 { try store.add(NewItem(.genericPassword, [.service: "reads", .account: .string("r\(i)")], data: Data("s".utf8))) }
        let fresh = try SecretServiceStore(namespace: namespace)   // a new connection: nothing remembered
        let counter = ss_probe_count_calls("GetSecrets")
        _ = try fresh.items(matching: ItemQuery(.genericPassword, [.service: "reads"], limit: .all, returning: .attributes))
        _ = try fresh.items(matching: ItemQuery(.genericPassword, [.service: "reads"], limit: .all, returning: .persistentRef))
        _ = try fresh.item(matching: ItemQuery(.genericPassword, [.service: "reads", .account: "r1"], returning: .attributes))
        say("measure attributeReads \(ss_probe_count(counter))")
        _ = try fresh.item(matching: ItemQuery(.genericPassword, [.service: "reads", .account: "r1"], returning: .data))
        say("measure afterDataRead \(ss_probe_count(counter))")
        try fresh.clear()
    } catch {
        say("step reads error \(error.code.name) 0 \(error.message)")
    }
case "stopAtCreate", "stopAtDelete", "killAtImport":
    faultScenario(scenario)
case "killed":
    guard step("open", { () throws(SecureStoreError) in store = try SecretServiceStore(namespace: namespace) }) else { exit(1) }
    step("add") { () throws(SecureStoreError) in try store?.add(item) }
    if let pid = daemonPID() {
        kill(pid, SIGKILL)
        say("killed \(pid)")
    }
    waitFor(false)
    step("afterKill") { () throws(SecureStoreError) in _ = try store?.items(matching: query) }
    restartUnlocked()
    step("afterRestart") { () throws(SecureStoreError) in
        // KeePassXC as the tests run it saves on exit, not after every change: a killed one lost the item.
        let kept = ProcessInfo.processInfo.environment["SECURESTORE_SECRET_SERVICE_PROVIDER"] != "keepassxc"
        guard try store?.items(matching: query).first?.data == (kept ? Data("x".utf8) : nil) else {
            throw SecureStoreError(.internalError, "wrong data after restart")
        }
        try store?.add(NewItem(.genericPassword, [.service: "probe", .account: "second"]))
    }
    step("clear") { () throws(SecureStoreError) in try store?.clear() }
case "stopped":
    guard step("open", { () throws(SecureStoreError) in store = try SecretServiceStore(namespace: namespace) }) else { exit(1) }
    step("add") { () throws(SecureStoreError) in try store?.add(item) }
    let pid = daemonPID()
    if let pid { kill(pid, SIGSTOP) }
    step("stoppedCopy") { () throws(SecureStoreError) in _ = try store?.items(matching: query) }
    if let pid { kill(pid, SIGCONT) }
    step("afterContinue") { () throws(SecureStoreError) in
        guard try store?.items(matching: query).first?.data == Data("x".utf8) else {
            throw SecureStoreError(.internalError, "wrong data after the daemon continued")
        }
    }
    step("clear") { () throws(SecureStoreError) in try store?.clear() }
case "asyncStopped":
    let done = DispatchSemaphore(value: 0)
    // Detached: top-level code runs on the main actor, whose thread waits on the semaphore below.
    Task.detached { [namespace] in
        await asyncStopped(namespace: namespace)
        done.signal()
    }
    done.wait()
case "locked":
    guard step("open", { () throws(SecureStoreError) in store = try SecretServiceStore(namespace: namespace) }) else { exit(1) }
    step("add") { () throws(SecureStoreError) in try store?.add(item) }
    // Lock answers with a prompt on KeePassXC (which then locks at once); gnome-keyring locks without one.
    let locking = shell("dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets "
                        + "org.freedesktop.Secret.Service.Lock array:objpath:\(collectionPath())")
    if let prompt = locking.components(separatedBy: "object path \"").last?.prefix(while: { $0 != "\"" }), prompt != "/",
       prompt.hasPrefix("/org/freedesktop/secrets/prompt/") {
        _ = shell("dbus-send --session --print-reply --dest=org.freedesktop.secrets \(prompt) org.freedesktop.Secret.Prompt.Prompt string:")
    }
    waitForCollection(locked: true)
    step("lockedCopy") { () throws(SecureStoreError) in _ = try store?.items(matching: query) }
    step("lockedMissing") { () throws(SecureStoreError) in
        _ = try store?.items(matching: ItemQuery(.genericPassword, [.service: "probe", .account: "missing"]))
    }
    step("lockedAdd") { () throws(SecureStoreError) in try store?.add(NewItem(.genericPassword, [.service: "probe", .account: "other"])) }
    step("lockedClear") { () throws(SecureStoreError) in try store?.clear() }
    // A new connection reads the lock state with its first transaction (opening makes no extra round trip).
    step("lockedOpen") { () throws(SecureStoreError) in _ = try SecretServiceStore(namespace: namespace).items(matching: query) }
    step("lockedOpenAdd") { () throws(SecureStoreError) in
        try SecretServiceStore(namespace: namespace).add(NewItem(.genericPassword, [.service: "probe", .account: "other"]))
    }
    restartUnlocked()
    step("afterUnlock") { () throws(SecureStoreError) in
        guard try store?.items(matching: query).first?.data == Data("x".utf8) else {
            throw SecureStoreError(.internalError, "wrong data after unlock")
        }
    }
    step("clear") { () throws(SecureStoreError) in try store?.clear() }
case "change":
    // Another process changes the items a test process has read: x's comment, y deleted and added again.
    let args = CommandLine.arguments
    guard args.count == 3 else { say("usage: change NAMESPACE"); exit(2) }
    do throws(SecureStoreError) {
        let peer = try SecretServiceStore(namespace: args[2])
        try peer.update(ItemQuery(.genericPassword, [.service: "cache", .account: "x"]), with: ItemChanges([.comment: "from-peer"]))
        try peer.delete(ItemQuery(.genericPassword, [.service: "cache", .account: "y"]))
        try peer.add(NewItem(.genericPassword, [.service: "cache", .account: "y", .comment: "re-added"], data: Data("y2".utf8)))
        say("ok")
    } catch {
        say("fatal \(error.code.name) \(error.message)")
        exit(1)
    }
case "race":
    let args = CommandLine.arguments
    guard args.count == 4, let count = Int(args[3]) else { say("usage: race NAMESPACE COUNT"); exit(2) }
    do throws(SecureStoreError) {
        let racer = try SecretServiceStore(namespace: args[2])
        for i in 0..<count {
            // As a careful caller does: a writer that waited longer than the lock's wait for the others (the
            // error says nothing was written, try again) tries again, a few times. On a busy machine 8 racing
            // processes can keep one waiting that long (the lock is not fair); uniqueness is what is tested.
            var busy = 0
            while true {
                do throws(SecureStoreError) {
                    try racer.add(NewItem(.genericPassword, [.service: "race", .account: .string("k-\(i)")],
                                          data: Data("\(getpid())".utf8)), returning: [])
                    say("ok k-\(i)")
                } catch {
                    if error.code == .io, error.message.contains("locked for writing"), busy < 5 {
                        busy += 1
                        continue
                    }
                    say(error.code == .duplicateItem ? "dup k-\(i)" : "err k-\(i) \(error.code.name) \(error.message)")
                }
                break
            }
        }
    } catch {
        say("fatal \(error.code.name) \(error.message)")
        exit(1)
    }
default:
    guard step("open", { () throws(SecureStoreError) in store = try SecretServiceStore(namespace: namespace) }) else { exit(1) }
    step("add") { () throws(SecureStoreError) in try store?.add(item) }
    step("copy") { () throws(SecureStoreError) in _ = try store?.items(matching: query) }
    step("clear") { () throws(SecureStoreError) in try store?.clear() }
}
