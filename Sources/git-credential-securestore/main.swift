// git-credential-securestore: git's credential helper protocol on the store the `securestore` tool uses.
// `git config --global credential.helper securestore` (this program on PATH). Secrets pass only through
// standard input and output; messages go to standard error and never hold a secret.
import Foundation
import SecureStoreCore
import SecureStoreBackends
import SecureStoreCredentials

HelperProcess.disableCoreDumps()
let arguments = Array(CommandLine.arguments.dropFirst())
var input = Data()
// Standard input is read only for an action that has a credential to read (git's protocol: a blank line or
// end of file ends it).
if let action = arguments.last, ["get", "store", "erase"].contains(action) {
    do throws(CredentialHelperError) {
        input = try HelperProcess.readStandardInput(stopAtBlankLine: true)
    } catch {
        HelperProcess.write(Data("git-credential-securestore: \(error.message)\n".utf8), to: 2)
        exit(1)
    }
}
let outcome = GitCredentialHelper.run(arguments: arguments, input: input) { (choice: StoreChoice) throws(SecureStoreError) in
    try BuiltinBackends.open(backend: choice.backend, configFile: choice.configFile, creatingStore: choice.creatingStore)
}
input.resetBytes(in: 0..<input.count)
HelperProcess.write(outcome.output, to: 1)
if let message = outcome.diagnostic {
    HelperProcess.write(Data("git-credential-securestore: \(message)\n".utf8), to: 2)
}
exit(outcome.status)
