import Foundation
import SecureStore
import SecretServiceStore

// Opens a Secret Service store with this process's environment, adds and reads one item, and prints
// `ok` or `error <code> <message>`. The tests run it with a broken DBUS_SESSION_BUS_ADDRESS, because
// libsecret/GIO cache the session bus connection per process.
let namespace = CommandLine.arguments.dropFirst().first ?? "probe-\(UInt64.random(in: 0...UInt64.max))"
do throws(SecureStoreError) {
    let store = try SecretServiceStore(namespace: namespace)
    try store.add(NewItem(.genericPassword, [.service: "probe", .account: "probe"], data: Data("x".utf8)))
    _ = try store.copyMatching(ItemQuery(.genericPassword, [.service: "probe"], returning: .data))
    try store.clear()
    print("ok")
} catch {
    print("error \(error.code.name) \(error.message)")
    exit(1)
}
