import Testing
import SecItem
import SecureStoreCredentials

/// The helpers define Apple's codes themselves (no SecItem import): they must be the SecItem constants' values,
/// or an item a helper stores would not be found by the same query through SecItemCopyMatching.
@Suite("Apple codes")
struct AppleCodeTests {
    @Test("each code the helpers store is the value of its kSec constant")
    func sameAsSecItem() {
        #expect(AppleCode.protocolHTTP == kSecAttrProtocolHTTP as String)
        #expect(AppleCode.protocolHTTPS == kSecAttrProtocolHTTPS as String)
        #expect(AppleCode.protocolFTP == kSecAttrProtocolFTP as String)
        #expect(AppleCode.protocolFTPS == kSecAttrProtocolFTPS as String)
        #expect(AppleCode.protocolIMAP == kSecAttrProtocolIMAP as String)
        #expect(AppleCode.protocolIMAPS == kSecAttrProtocolIMAPS as String)
        #expect(AppleCode.protocolSMTP == kSecAttrProtocolSMTP as String)
        #expect(AppleCode.authenticationTypeDefault == kSecAttrAuthenticationTypeDefault as String)
    }
}
