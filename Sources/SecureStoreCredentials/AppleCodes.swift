/// Apple's four-character codes the helpers store, as `kSecAttrProtocol…` and `kSecAttrAuthenticationTypeDefault`
/// spell them, so an item a helper writes reads the same through the SecItem functions. Defined once here
/// rather than importing the SecItem module (and the process-wide store behind it) for eight strings;
/// `CredentialHelperTests` checks them against the SecItem constants.
package enum AppleCode {
    package static let protocolHTTP = "http"
    package static let protocolHTTPS = "htps"
    package static let protocolFTP = "ftp "
    package static let protocolFTPS = "ftps"
    package static let protocolIMAP = "imap"
    package static let protocolIMAPS = "imps"
    package static let protocolSMTP = "smtp"
    package static let authenticationTypeDefault = "dflt"
}
