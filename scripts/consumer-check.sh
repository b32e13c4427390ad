#!/usr/bin/env bash
# Builds two new packages that depend on this one by path, as a user's package would, and runs each:
#  (a) `SecItem` + `SQLiteStore` with only the SQLite trait: the SecItem functions on the default store (the
#      encrypted SQLite file) add, copy and delete one item; `ldd` shows libsqlite3 and libsodium linked and
#      neither libsecret, GLib nor libpq; the build log shows the Secret Service and PostgreSQL targets were
#      not compiled and their pkg-config packages not consulted; choosing an unbuilt backend names its trait.
#  (b) `InMemoryStore` alone with no trait: one add, copy and delete; `ldd` shows no C library of a backend.
#  (c) a program with its own `ItemQuery`, `Item`, `Keychain` and `SecureStore` types: ours are named through
#      the module (`SecureStoreCore.ItemQuery`, `SecureStoreCore.SecureStore`), and the attribute values are
#      variables and interpolations; it builds and runs one add, copy and delete.
#  (d) the `securestore` tool with every trait disabled: builds, links no backend library, lists memory as
#      available, and a command that needs SQLite (`export`) names the trait instead of running.
# Usage: scripts/consumer-check.sh            (any failure exits non-zero)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pkg="$(basename "$root")"   # a path dependency's identity is its folder name
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "consumer-check: FAILED: $*" >&2; exit 1; }

# $1 folder, $2 traits (Swift array literal), $3 products (Swift array literal of .product entries)
manifest() {
  mkdir -p "$1/Sources/App"
  cat >"$1/Package.swift" <<EOF
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "App",
    dependencies: [.package(path: "$root", traits: $2)],
    targets: [.executableTarget(name: "App", dependencies: $3)]
)
EOF
}

# Libraries a binary links that belong to a backend.
backend_libs() { { ldd "$1" | grep -o -E 'lib(sqlite3|sodium|secret-1|glib-2\.0|gio-2\.0|gobject-2\.0|pq)\.so[^ ]*' || true; } | sort -u | tr '\n' ' '; }

echo "consumer-check: (a) SecItem + SQLiteStore, traits [\"SQLite\"]"
a="$work/sqlite"
manifest "$a" '["SQLite"]' "[.product(name: \"SecItem\", package: \"$pkg\"), .product(name: \"SecureStoreSQLite\", package: \"$pkg\"),
  .product(name: \"SecureStoreCore\", package: \"$pkg\"), .product(name: \"SecureStoreBackends\", package: \"$pkg\"),
  .product(name: \"SecureStoreCrypto\", package: \"$pkg\")]"
cat >"$a/Sources/App/main.swift" <<'EOF'
import Foundation
import SecItem
import SecureStoreCore
import SecureStoreBackends
import SecureStoreSQLite
import SecureStoreCrypto

// The default store: the SecItem functions open the encrypted SQLite file under $XDG_DATA_HOME.
let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                            kSecAttrService as String: "consumer-check", kSecAttrAccount as String: "alice"]
var add = query
add[kSecValueData as String] = Data("s3cret".utf8)
guard SecItemAdd(add as CFDictionary, nil) == errSecSuccess else { fatalError("SecItemAdd failed") }
var copy = query
copy[kSecReturnData as String] = true
var result: CFTypeRef?
guard SecItemCopyMatching(copy as CFDictionary, &result) == errSecSuccess,
      let data = result as? Data, data == Data("s3cret".utf8) else { fatalError("SecItemCopyMatching failed") }
guard SecItemDelete(query as CFDictionary) == errSecSuccess,
      SecItemCopyMatching(copy as CFDictionary, &result) == errSecItemNotFound else { fatalError("SecItemDelete failed") }
print("store: \(try! SecItemSystem.store().storeDescription)")
print("built in: \(BuiltinBackends.builtIn.joined(separator: ", "))")
// SQLiteStore directly, as a library user would.
let dir = ProcessInfo.processInfo.environment["XDG_DATA_HOME"]!
// The key type is SecureStoreCrypto's, imported by name (no module re-exports another's types).
let key: StoreKey = .raw(Data(repeating: 7, count: 32))
let store = try! SQLiteStore(path: dir + "/direct.db", key: key)
try! store.setPassword(Data("x".utf8), service: "direct", account: "bob")
precondition(try! store.password(service: "direct", account: "bob") == Data("x".utf8))
precondition(try! store.delete(ItemQuery(.genericPassword, [.service: .string("direct")])) == 1)
// An unbuilt backend is an error naming its trait.
for name in ["secret-service", "postgres"] {
    do throws(SecureStoreError) {
        _ = try BuiltinBackends.open(backend: name)
        fatalError("\(name) opened although its trait is disabled")
    } catch {
        print("\(name): \(error)")
    }
}
print("add/copy/delete: ok")
EOF
(cd "$a" && swift build -v >build.log 2>&1) || { tail -30 "$a/build.log" >&2; fail "(a) did not build"; }
grep -q -E 'SecretServiceStore|PostgresStore|CSecret|CLibPQ' <(grep -E -- '-module-name ' "$a/build.log" | grep -o -E -- '-module-name [A-Za-z_]+') \
  && fail "(a) compiled a Secret Service or PostgreSQL module"
grep -q -E 'libsecret|libpq|glib-2\.0|-lpq|-lsecret' "$a/build.log" && fail "(a) the build log mentions libsecret, GLib or libpq"
modules="$(grep -o -E -- '-module-name [A-Za-z_]+' "$a/build.log" | awk '{print $2}' | sort -u | tr '\n' ' ')"
echo "consumer-check: (a) compiled modules: $modules"
bin="$a/.build/debug/App"
libs="$(backend_libs "$bin")"
echo "consumer-check: (a) ldd, backend libraries: $libs"
case "$libs" in *secret*|*glib*|*gio*|*gobject*|*libpq*) fail "(a) links libsecret, GLib or libpq" ;; esac
case "$libs" in *libsqlite3*) ;; *) fail "(a) does not link libsqlite3" ;; esac
case "$libs" in *libsodium*) ;; *) fail "(a) does not link libsodium" ;; esac
out="$(env -u SECURESTORE_BACKEND -u SECURESTORE_CONFIG XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config" "$bin")" \
  || fail "(a) did not run"
echo "$out" | sed 's/^/consumer-check: (a) /'
echo "$out" | grep -q 'secret-service: .*trait "SecretService"' || fail "(a) the unbuilt secret-service error does not name its trait"
echo "$out" | grep -q 'postgres: .*trait "Postgres"' || fail "(a) the unbuilt postgres error does not name its trait"
echo "$out" | grep -q 'add/copy/delete: ok' || fail "(a) the round trip did not finish"

echo "consumer-check: (b) InMemoryStore alone, traits []"
b="$work/memory"
manifest "$b" '[]' "[.product(name: \"SecureStoreInMemory\", package: \"$pkg\"), .product(name: \"SecureStoreCore\", package: \"$pkg\")]"
cat >"$b/Sources/App/main.swift" <<'EOF'
import Foundation
import SecureStoreInMemory
import SecureStoreCore

let store = try! InMemoryStore()
try! store.add(NewItem(.genericPassword, [.service: .string("consumer-check"), .account: .string("alice")],
                       data: Data("s3cret".utf8)))
precondition(try! store.password(service: "consumer-check", account: "alice") == Data("s3cret".utf8))
precondition(try! store.delete(ItemQuery(.genericPassword, [.service: .string("consumer-check")])) == 1)
precondition(try! store.password(service: "consumer-check", account: "alice") == nil)
print("add/copy/delete: ok")
EOF
(cd "$b" && swift build -v >build.log 2>&1) || { tail -30 "$b/build.log" >&2; fail "(b) did not build"; }
grep -q -E 'libsqlite3|libsodium|libsecret|libpq|-lsqlite3|-lsodium|-lpq|-lsecret' "$b/build.log" \
  && fail "(b) the build log mentions a backend's C library"
modules="$(grep -o -E -- '-module-name [A-Za-z_]+' "$b/build.log" | awk '{print $2}' | sort -u | tr '\n' ' ')"
echo "consumer-check: (b) compiled modules: $modules"
libs="$(backend_libs "$b/.build/debug/App")"
echo "consumer-check: (b) ldd, backend libraries: ${libs:-none}"
[ -z "$libs" ] || fail "(b) links a backend's C library"
"$b/.build/debug/App" | sed 's/^/consumer-check: (b) /'

echo "consumer-check: (c) its own ItemQuery, Item, Keychain and SecureStore; ours qualified by module, traits []"
c="$work/names"
manifest "$c" '[]' "[.product(name: \"SecureStoreInMemory\", package: \"$pkg\"), .product(name: \"SecureStoreCore\", package: \"$pkg\")]"
cat >"$c/Sources/App/main.swift" <<'EOF'
import Foundation
import SecureStoreCore
import SecureStoreInMemory

// The program's own types, named as ours are: unqualified names are the program's, ours go through the module.
struct ItemQuery { var text: String }
struct Item { var title: String }
struct Keychain { var items: [Item] = [] }
protocol SecureStore { func save(_ item: Item) -> String }
struct Notebook: SecureStore { func save(_ item: Item) -> String { "noted \(item.title)" } }

let store: any SecureStoreCore.SecureStore = try! InMemoryStore()
let user = "alice"
let id = 7
try! store.add(SecureStoreCore.NewItem(.genericPassword, [.service: "consumer-check", .account: user, .label: "token-\(id)"],
                                       data: Data("s3cret".utf8)))
let query = SecureStoreCore.ItemQuery(.genericPassword, [.service: "consumer-check", .account: "\(user)"], returning: [.data, .attributes])
let found: SecureStoreCore.Item? = try! store.item(matching: query)
precondition(found?.data == Data("s3cret".utf8) && found?.attributes?[.label] == .string("token-7"))
precondition(store is SecureStoreCore.Keychain<InMemoryBackend>)
precondition(try! store.delete(SecureStoreCore.ItemQuery(.genericPassword, [.account: user])) == 1)
let mine = ItemQuery(text: "own"), note = Notebook().save(Item(title: mine.text)), shelf = Keychain(items: [Item(title: note)])
print("\(shelf.items[0].title); add/copy/delete: ok")
EOF
(cd "$c" && swift build >build.log 2>&1) || { tail -30 "$c/build.log" >&2; fail "(c) did not build"; }
out="$("$c/.build/debug/App")" || fail "(c) did not run"
echo "$out" | sed 's/^/consumer-check: (c) /'
echo "$out" | grep -q 'noted own; add/copy/delete: ok' || fail "(c) the round trip did not finish"

echo "consumer-check: (d) the securestore tool itself with every trait disabled"
d="$work/tool"
swift build --package-path "$root" --scratch-path "$d" --disable-default-traits --product securestore >"$work/tool.log" 2>&1 \
  || { tail -30 "$work/tool.log" >&2; fail "(d) the tool did not build without traits"; }
tool="$d/debug/securestore"
libs="$(backend_libs "$tool")"
echo "consumer-check: (d) ldd, backend libraries: ${libs:-none}"
[ -z "$libs" ] || fail "(d) the traitless tool links a backend's C library"
out="$(env -u SECURESTORE_BACKEND -u SECURESTORE_CONFIG XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config" "$tool" backends 2>&1)" || true
echo "$out" | grep -q -E '^\*? *memory +available' || { echo "$out" >&2; fail "(d) backends does not list memory as available"; }
out="$(SECURESTORE_EXPORT_PASSPHRASE=x "$tool" --backend memory export --output "$work/x.db" 2>&1)" && fail "(d) export ran without the SQLite backend"
echo "consumer-check: (d) $out"
echo "$out" | grep -q 'trait "SQLite"' || fail "(d) export without SQLite does not name the trait"
echo "consumer-check: ok"
