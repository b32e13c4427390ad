import Foundation
import SecItem
import SecureStorePaths

// Runs SecItem calls against the process-wide default store (nothing bootstrapped: the configuration the
// environment selects, by default the SQLite store under the XDG folders), as an Apple-style program would,
// for SecItemDefaultStoreTests.
//
//   securestore-secitem-probe STEP...   each STEP is one call, in order:
//     copy:SERVICE:ACCOUNT      SecItemCopyMatching (generic password, returning data, limit one)
//     update:SERVICE:ACCOUNT    SecItemUpdate (a new secret, "updated")
//     delete:SERVICE:ACCOUNT    SecItemDelete
//     add:SERVICE:ACCOUNT       SecItemAdd (the secret "secret SERVICE ACCOUNT")
//
// Prints one line per step: `STEP STATUS` and, for a copy that found the item, ` SECRET`.

func query(_ service: String, _ account: String) -> [String: Any] {
    [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
     kSecAttrAccount as String: account]
}

for step in CommandLine.arguments.dropFirst() {
    let parts = step.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 3 else {
        FileHandle.standardError.write(Data("usage: securestore-secitem-probe copy|update|delete|add:SERVICE:ACCOUNT ...\n".utf8))
        exit(64)
    }
    let (call, service, account) = (parts[0], parts[1], parts[2])
    var line = step
    switch call {
    case "copy":
        var q = query(service, account)
        q[kSecReturnData as String] = true
        q[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(q as CFDictionary, &result)
        line += " \(status)"
        if let data = result as? Data { line += " " + String(decoding: data, as: UTF8.self) }
    case "update":
        line += " \(SecItemUpdate(query(service, account) as CFDictionary, [kSecValueData as String: Data("updated".utf8)] as CFDictionary))"
    case "delete":
        line += " \(SecItemDelete(query(service, account) as CFDictionary))"
    case "add":
        var q = query(service, account)
        q[kSecValueData as String] = Data("secret \(service) \(account)".utf8)
        line += " \(SecItemAdd(q as CFDictionary, nil))"
    default:
        FileHandle.standardError.write(Data("unknown call \(call)\n".utf8))
        exit(64)
    }
    print(line)
}
