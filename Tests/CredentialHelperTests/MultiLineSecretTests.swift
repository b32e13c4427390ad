import Foundation
import Testing
import SecureStoreCore
@testable import SecureStoreCredentials

@Suite("git credential protocol: secrets git cannot carry")
struct MultiLineSecretTests {
    @Test("a multi-line secret stored by other means (securestore add) is refused by git's get, as a NUL byte is, never cut to its first line; git's own extra lines still work")
    func multiLineSecretIsRefused() throws {
        let h = try Harness()
        #expect(h.git("store", ["protocol=https", "host=example.com", "username=bob", "password=line1"]).status == 0)
        let query = ItemQuery(.internetPassword, [.server: .string("example.com")])
        try h.store.update(query, with: ItemChanges(data: Data("line1\nline2".utf8)))
        let got = h.git("get", ["protocol=https", "host=example.com"])
        #expect(got.status != 0, "\(got.text)")
        #expect(!got.text.contains("password=line1"), "\(got.text)")
        // The layout git itself stores (password, then password_expiry_utc= / oauth_refresh_token=) is not refused.
        try h.store.update(query, with: ItemChanges(data: Data("pw\npassword_expiry_utc=1700000000".utf8)))
        #expect(h.git("get", ["protocol=https", "host=example.com"]).text
                == "username=bob\npassword=pw\npassword_expiry_utc=1700000000\n")
    }
}
