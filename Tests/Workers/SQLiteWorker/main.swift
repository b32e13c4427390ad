// Helper process for the SQLite backend's multi-process and crash tests.
//
//   securestore-sqlite-worker add  DB HEXKEY PREFIX FIRST COUNT   adds PREFIX-i for i in FIRST..<FIRST+COUNT
//   securestore-sqlite-worker loop DB HEXKEY PREFIX               adds PREFIX-0, PREFIX-1, … until killed
//   securestore-sqlite-worker default                             adds one item to the default store
//   securestore-sqlite-worker read DB HEXKEY PREFIX FIRST COUNT   reads PREFIX-i back, then tries one add
//   securestore-sqlite-worker write DB HEXKEY PREFIX              opens the store and adds PREFIX (the first
//                                                                 write upgrades an old schema); "ok PREFIX"
//
// Prints one line per add, flushed at once: "ok NAME", "dup NAME" or "err NAME CODE MESSAGE"; `read` prints
// "read NAME" (the secret is NAME), "bad NAME" or "err NAME CODE MESSAGE", then "write ok" or
// "write err CODE MESSAGE", or "fatal CODE MESSAGE" when the store does not open.
import Foundation
import SecureStoreCore
import SecureStoreSQLite

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let args = CommandLine.arguments
if args.count == 2, args[1] == "default" {
    // Opens the store at the default location with the default key file and adds one item.
    do {
        let store = try SQLiteStore()
        try store.add(NewItem(.genericPassword, [.service: .string("default")], data: Data("d".utf8)), returning: [])
        let paths = SQLiteBackend.defaultPaths()
        say("ok \(paths.database) \(paths.keyFile)")
        exit(0)
    } catch {
        say("fatal \(error)")
        exit(1)
    }
}
guard args.count >= 5 else {
    FileHandle.standardError.write(Data("usage: securestore-sqlite-worker add|loop DB HEXKEY PREFIX [FIRST COUNT]\n".utf8))
    exit(2)
}
var keyBytes = Data()
var hex = Substring(args[3])
while hex.count >= 2 {
    guard let b = UInt8(hex.prefix(2), radix: 16) else { exit(2) }
    keyBytes.append(b)
    hex = hex.dropFirst(2)
}

if args[1] == "read" {
    do throws(SecureStoreError) {
        let store = try SQLiteStore(path: args[2], key: .raw(keyBytes))
        let first = args.count > 5 ? Int(args[5]) ?? 0 : 0
        let count = args.count > 6 ? Int(args[6]) ?? 0 : 0
        for i in first..<(first + count) {
            let name = "\(args[4])-\(i)"
            do throws(SecureStoreError) {
                let query = ItemQuery(.genericPassword, [.service: .string("worker"), .account: .string(name)], returning: .data)
                let data = try store.items(matching: query).first?.data
                say(data == Data(name.utf8) ? "read \(name)" : "bad \(name)")
            } catch {
                say("err \(name) \(error.code.name) \(error.message)")
            }
        }
        do throws(SecureStoreError) {
            try store.add(NewItem(.genericPassword, [.service: .string("worker"), .account: .string("written")]), returning: [])
            say("write ok")
        } catch {
            say("write err \(error.code.name) \(error.message)")
        }
        exit(0)
    } catch {
        say("fatal \(error.code.name) \(error.message)")
        exit(1)
    }
}

if args[1] == "write" {
    do throws(SecureStoreError) {
        let store = try SQLiteStore(path: args[2], key: .raw(keyBytes))
        say("opened")
        try store.add(NewItem(.genericPassword, [.service: .string("worker"), .account: .string(args[4])],
                              data: Data(args[4].utf8)), returning: [])
        say("ok \(args[4])")
        exit(0)
    } catch {
        say("err \(args[4]) \(error.code.name) \(error.message)")
        exit(1)
    }
}

do {
    let store = try SQLiteStore(path: args[2], key: .raw(keyBytes))
    let prefix = args[4]
    let first = args.count > 5 ? Int(args[5]) ?? 0 : 0
    let count = args.count > 6 ? Int(args[6]) ?? 0 : Int.max
    var i = first
    while args[1] == "loop" || i < first + count {
        let name = "\(prefix)-\(i)"
        do throws(SecureStoreError) {
            let attributes: [AttributeName: AttributeValue] = [.service: .string("worker"), .account: .string(name)]
            try store.add(NewItem(.genericPassword, attributes, data: Data(name.utf8)), returning: [])
            say("ok \(name)")
        } catch {
            say(error.code == .duplicateItem ? "dup \(name)" : "err \(name) \(error.code.name) \(error.message)")
        }
        i += 1
    }
} catch {
    say("fatal \(error)")
    exit(1)
}
