// Helper process for the PostgreSQL backend's multi-process tests (standing in for separate machines).
//
//   securestore-postgres-worker add    STORE HEXKEY PREFIX FIRST COUNT   adds PREFIX-i for i in FIRST..<FIRST+COUNT
//   securestore-postgres-worker script STORE HEXKEY PREFIX COUNT         adds PREFIX-0..<COUNT and shared-0..<COUNT,
//                                                                        then updates every 3rd own item, deletes every 5th
//   securestore-postgres-worker outage pg:NS HEXKEY PREFIX COUNT         adds COUNT items, stops the server with
//       $SECURESTORE_TEST_POSTGRES_CONTROL, reports each failure ("down WHAT CODE MILLISECONDS MESSAGE"),
//       starts it again and reports what the same store object then finds ("up N", "final N")
//
//   securestore-postgres-worker stalled [executor]   one async call hung on a stalled connection while others run,
//                                            [from tasks on the store's executor] (Stalled.swift)
//   securestore-postgres-worker pair SCENARIO                         the primary + standby scenarios (Pair.swift)
//
// STORE is `pg:NAMESPACE` (the server in $SECURESTORE_TEST_POSTGRES_URL, password in
// $SECURESTORE_TEST_POSTGRES_PASSWORD) or `sqlite:PATH`, so the same sequence runs against both backends.
// Prints one line per operation, flushed at once: "ok NAME", "dup NAME" or "err NAME CODE MESSAGE".
import Foundation
import SecureStoreCore
import SecureStorePostgres
import SecureStoreSQLite
import TestSupport

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let args = CommandLine.arguments
if (2...3).contains(args.count), args[1] == "stalled", args.count == 2 || args[2] == "executor" {
    let done = DispatchSemaphore(value: 0)
    // Detached: top-level code runs on the main actor, whose thread waits on the semaphore below.
    Task.detached {
        do { try await Stalled.run(onStoreExecutor: args.count == 3) } catch { say("measure error \(error)") }
        done.signal()
    }
    done.wait()
    exit(0)
}
if args.count == 3, args[1] == "pair" {
    do throws(SecureStoreError) { try Pair.run(args[2]) } catch {
        say("fatal \(error)")
        exit(1)
    }
    exit(0)
}
guard args.count >= 6 else {
    FileHandle.standardError.write(Data("usage: securestore-postgres-worker add|script STORE HEXKEY PREFIX …\n".utf8))
    exit(2)
}
let keyBytes: Data = {
    var bytes = Data()
    var hex = Substring(args[3])
    while hex.count >= 2 {
        guard let b = UInt8(hex.prefix(2), radix: 16) else { exit(2) }
        bytes.append(b)
        hex = hex.dropFirst(2)
    }
    return bytes
}()

@MainActor func openStore(_ spec: String) throws(SecureStoreError) -> any SecureStore {
    if spec.hasPrefix("sqlite:") {
        return try SQLiteStore(path: String(spec.dropFirst(7)), key: .raw(keyBytes))
    }
    guard spec.hasPrefix("pg:"), let url = ProcessInfo.processInfo.environment["SECURESTORE_TEST_POSTGRES_URL"] else {
        throw .param("store", "STORE must be pg:NAMESPACE (with SECURESTORE_TEST_POSTGRES_URL set) or sqlite:PATH")
    }
    return try PostgresStore(url: url, key: .raw(keyBytes), namespace: String(spec.dropFirst(3)),
                             passwordEnv: "SECURESTORE_TEST_POSTGRES_PASSWORD")
}

func attributes(_ name: String) -> [AttributeName: AttributeValue] {
    [.service: .string("worker"), .account: .string(name)]
}

func report(_ name: String, _ body: () throws(SecureStoreError) -> Void) {
    do throws(SecureStoreError) {
        try body()
        say("ok \(name)")
    } catch {
        say(error.code == .duplicateItem ? "dup \(name)" : "err \(name) \(error.code.name) \(error.message)")
    }
}

do {
    let store = try openStore(args[2])
    let prefix = args[4]
    switch args[1] {
    case "add":
        let first = Int(args[5]) ?? 0
        let count = args.count > 6 ? Int(args[6]) ?? 0 : 0
        for i in first..<(first + count) {
            let name = "\(prefix)-\(i)"
            report(name) { () throws(SecureStoreError) in
                try store.add(NewItem(.genericPassword, attributes(name), data: Data(name.utf8)), returning: [])
            }
        }
    case "script":
        let count = Int(args[5]) ?? 0
        for i in 0..<count {
            for name in ["\(prefix)-\(i)", "shared-\(i)"] {
                report(name) { () throws(SecureStoreError) in
                    try store.add(NewItem(.genericPassword, attributes(name), data: Data(name.utf8)), returning: [])
                }
            }
        }
        for i in stride(from: 0, to: count, by: 3) {
            let name = "\(prefix)-\(i)"
            report("update \(name)") { () throws(SecureStoreError) in
                var changes = ItemChanges(data: Data("updated \(name)".utf8))
                changes.attributes[.label] = .string("label \(name)")
                try store.update(ItemQuery(.genericPassword, attributes(name)), with: changes)
            }
        }
        for i in stride(from: 0, to: count, by: 5) {
            let name = "\(prefix)-\(i)"
            report("delete \(name)") { () throws(SecureStoreError) in
                try store.delete(ItemQuery(.genericPassword, attributes(name)))
            }
        }
    case "outage":
        let count = Int(args[5]) ?? 0
        for i in 0..<count {
            let name = "\(prefix)-\(i)"
            report(name) { () throws(SecureStoreError) in
                try store.add(NewItem(.genericPassword, attributes(name), data: Data(name.utf8)), returning: [])
            }
        }
        guard let control = ProcessInfo.processInfo.environment["SECURESTORE_TEST_POSTGRES_CONTROL"] else {
            say("fatal SECURESTORE_TEST_POSTGRES_CONTROL is not set")
            exit(1)
        }
        // posix_spawn, not Foundation's Process: the restarted server would inherit Process's exit-monitoring
        // descriptor, and waitUntilExit would wait for the server to end.
        func server(_ command: String) {
            guard let pid = spawn(control, [command], environment: ProcessInfo.processInfo.environment, stdout: nil) else {
                say("fatal cannot start \(control)")
                exit(1)
            }
            say("server \(command) \(reap(pid))")
        }
        func down(_ what: String, _ body: () throws(SecureStoreError) -> Void) {
            let start = ContinuousClock.now
            let failed: SecureStoreError?
            do throws(SecureStoreError) { try body(); failed = nil } catch { failed = error }
            let ms = (ContinuousClock.now - start).components.seconds * 1000
                + (ContinuousClock.now - start).components.attoseconds / 1_000_000_000_000_000
            say("down \(what) \(failed?.code.name ?? "ok") \(ms) \(failed?.message ?? "")")
        }
        let query = ItemQuery(.genericPassword, [.service: .string("worker")], limit: .all, returning: .attributes)
        server("stop")
        down("add") { () throws(SecureStoreError) in
            try store.add(NewItem(.genericPassword, attributes("during"), data: Data()), returning: [])
        }
        down("get") { () throws(SecureStoreError) in _ = try store.items(matching: query) }
        down("open") { () throws(SecureStoreError) in _ = try openStore(args[2]) }
        server("start")
        do throws(SecureStoreError) {
            say("up \(try store.items(matching: query).count)")
            try store.add(NewItem(.genericPassword, attributes("after"), data: Data("after".utf8)), returning: [])
            say("final \(try store.items(matching: query).count)")
        } catch {
            say("err up \(error.code.name) \(error.message)")
        }
    default:
        say("fatal unknown command \(args[1])")
        exit(2)
    }
} catch {
    say("fatal \(error)")
    exit(1)
}

