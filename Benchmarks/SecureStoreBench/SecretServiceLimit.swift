import Foundation
import CSecret

/// The Secret Service limit: libsecret's C calls made directly on one connection (one `SecretService` proxy
/// with an open transfer session), on the same daemon and collection as the backend. The only file of the
/// benchmark that imports libsecret.
///
/// Items carry three plain attributes (a per-case tag, service, account), so every operation is the fewest
/// D-Bus round trips the Secret Service API allows:
/// - add: one `CreateItem` (attributes + secret);
/// - lookup: one `SearchItems` + one `GetSecrets` for the one path;
/// - list (match-all with secrets): one `SearchItems` + one bulk `GetSecrets` for every path;
/// - update: one `SearchItems` + one `SetSecret`; delete: one `SearchItems` + one `Delete`;
/// - clear: one `SearchItems` on the tag + one `Delete` per item.
final class SecretServiceLimit: BenchTarget {
    private var service: UnsafeMutablePointer<SecretService>?
    private let collectionPath: String
    private let tag: String
    static let timeoutMilliseconds: Int32 = 10_000

    /// - Parameter tag: distinguishes this case's items from every other item in the collection.
    init(tag: String) throws {
        var error: UnsafeMutablePointer<GError>? = nil
        guard let service = ss_open(Self.timeoutMilliseconds, 1, nil, &error) else {
            throw Self.failure(error, "opening a Secret Service session")
        }
        var aliasError: UnsafeMutablePointer<GError>? = nil
        let alias = secret_service_read_alias_dbus_path_sync(service, "default", nil, &aliasError)
        if aliasError != nil {
            ss_unref(UnsafeMutableRawPointer(service))
            throw Self.failure(aliasError, "reading the default collection alias")
        }
        if let alias {
            collectionPath = String(cString: alias)
            ss_free(alias)
        } else {
            collectionPath = "/org/freedesktop/secrets/collection/login"
        }
        self.service = service
        self.tag = tag
    }

    deinit { close() }

    func close() {
        if let service { ss_unref(UnsafeMutableRawPointer(service)) }
        service = nil
    }

    private static func failure(_ error: UnsafeMutablePointer<GError>?, _ what: String) -> BenchFailure {
        let message = error.map { String(cString: ss_error_message($0)) } ?? "no reason given"
        ss_error_free(error)
        return BenchFailure("raw libsecret: \(what) failed: \(message)")
    }

    private func open() throws -> UnsafeMutablePointer<SecretService> {
        guard let service else { throw BenchFailure("raw libsecret: the connection was closed.") }
        return service
    }

    private func table(_ attributes: [(String, String)]) -> OpaquePointer? {
        let t = ss_strings_new()
        for (k, v) in attributes { ss_strings_put(t, k, v) }
        return t
    }

    private func key(_ service: String, _ account: String) -> [(String, String)] {
        [("securestore-bench", tag), ("service", service), ("account", account)]
    }

    /// One SearchItems: the unlocked paths matching `attributes`.
    private func search(_ attributes: [(String, String)]) throws -> [String] {
        let t = table(attributes)
        defer { ss_table_unref(t) }
        var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>? = nil
        var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>? = nil
        var error: UnsafeMutablePointer<GError>? = nil
        guard ss_search(try open(), t, &unlocked, &locked, &error) != 0 else { throw Self.failure(error, "SearchItems") }
        defer { ss_strv_free(unlocked); ss_strv_free(locked) }
        var out: [String] = []
        if let unlocked {
            var i = 0
            while let p = unlocked[i] {
                out.append(String(cString: p))
                i += 1
            }
        }
        return out
    }

    private func one(_ service: String, _ account: String) throws -> String {
        let paths = try search(key(service, account))
        guard paths.count == 1, let path = paths.first else {
            throw BenchFailure("raw libsecret: \(paths.count) items for \(service)/\(account), not 1.")
        }
        return path
    }

    /// One bulk GetSecrets; returns the total bytes and how many secrets came back.
    private func secrets(_ paths: [String]) throws -> (bytes: Int, count: Int) {
        var cPaths: [UnsafeMutablePointer<CChar>?] = paths.map { strdup($0) }
        cPaths.append(nil)
        defer { for p in cPaths { free(p) } }
        var error: UnsafeMutablePointer<GError>? = nil
        let service = try open()
        let secrets = cPaths.withUnsafeMutableBufferPointer { ss_get_secrets(service, $0.baseAddress, &error) }
        guard let secrets else { throw Self.failure(error, "GetSecrets") }
        defer { ss_table_unref(secrets) }
        var bytes = 0, count = 0
        for path in paths {
            guard let value = ss_secrets_lookup(secrets, path) else { continue }
            var length = 0
            _ = ss_value_bytes(value, &length)
            bytes += length
            count += 1
        }
        return (bytes, count)
    }

    func add(service: String, account: String, secret: Data) throws {
        let attributes = table(key(service, account))
        let properties = ss_item_properties("bench \(service)/\(account)", attributes)
        let value = secret.withUnsafeBytes { ss_value_new($0.baseAddress, $0.count) }
        defer { ss_table_unref(attributes); ss_table_unref(properties); ss_value_unref(value) }
        var error: UnsafeMutablePointer<GError>? = nil
        guard let path = secret_service_create_item_dbus_path_sync(try open(), collectionPath, properties, value,
                                                                  SECRET_ITEM_CREATE_NONE, nil, &error) else {
            throw Self.failure(error, "CreateItem")
        }
        ss_free(path)
    }

    func lookup(service: String, account: String) throws -> Int {
        let path = try one(service, account)
        let got = try secrets([path])
        guard got.count == 1 else { throw BenchFailure("raw libsecret: no secret for \(service)/\(account).") }
        return got.bytes
    }

    func list(service: String) throws -> Int {
        let paths = try search([("securestore-bench", tag), ("service", service)])
        guard !paths.isEmpty else { return 0 }
        let got = try secrets(paths)
        guard got.count == paths.count else { throw BenchFailure("raw libsecret: GetSecrets missed items.") }
        return got.count
    }

    func update(service: String, account: String, secret: Data) throws {
        let path = try one(service, account)
        let value = secret.withUnsafeBytes { ss_value_new($0.baseAddress, $0.count) }
        defer { ss_value_unref(value) }
        var error: UnsafeMutablePointer<GError>? = nil
        guard ss_set_item_secret(try open(), path, value, Self.timeoutMilliseconds, &error) != 0 else {
            throw Self.failure(error, "SetSecret")
        }
    }

    func delete(service: String, account: String) throws {
        let path = try one(service, account)
        try delete(path: path)
    }

    private func delete(path: String) throws {
        var error: UnsafeMutablePointer<GError>? = nil
        guard secret_service_delete_item_dbus_path_sync(try open(), path, nil, &error) != 0 else {
            throw Self.failure(error, "Delete")
        }
    }

    func clear() throws {
        for path in try search([("securestore-bench", tag)]) { try delete(path: path) }
    }

    func storageBytes() throws -> Int? { nil }
}
