// The seeds' scenario: an app saves a login token, reads it back at the next launch, deletes it at logout,
// and a tester clears the whole keychain to simulate a fresh install.
import Foundation
import SecureStoreCore
import SecureStoreBackends

func run(_ store: any SecureStore) throws(SecureStoreError) {
    print("store: \(store.storeDescription)")
    let service = "com.example.app.login"
    let token = Data("token-\(UUID().uuidString)".utf8)

    try store.setPassword(token, service: service, account: "alice")
    print("saved a \(token.count)-byte login token for service \(service)")

    guard let loaded = try store.password(service: service, account: "alice") else {
        throw SecureStoreError.notFound("the token just saved is missing")
    }
    print("read it back: \(loaded == token ? "identical" : "DIFFERENT")")

    let deleted = try store.delete(ItemQuery(.genericPassword, [.service: .string(service)]))
    print("logout deleted \(deleted) item(s); token now \(try store.password(service: service, account: "alice") == nil ? "gone" : "still there")")

    try store.add(NewItem(.internetPassword, [.server: "api.example.com", .account: "alice"], data: Data("pw".utf8)))
    try store.add(NewItem(.key, [.applicationTag: .data(Data("com.example.key".utf8))], data: Data(repeating: 7, count: 32)))
    let cleared = try store.clear()
    print("fresh install: cleared \(cleared) item(s) of every class")
}

do {
    // The configured store: by default the encrypted SQLite file under ~/.local/share/securestore/.
    try run(try BuiltinBackends.open())
} catch {
    FileHandle.standardError.write(Data("securestore-example: \(error)\n".utf8))
    exit(1)
}
