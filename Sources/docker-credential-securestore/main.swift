// docker-credential-securestore: docker's credential-helper protocol on the store the `securestore` tool
// uses. `"credsStore": "securestore"` in ~/.docker/config.json (this program on PATH). Errors are written to
// standard output with exit status 1, where docker's clients read them; none holds a secret.
import Foundation
import SecureStoreCore
import SecureStoreBackends
import SecureStoreCredentials

HelperProcess.disableCoreDumps()
let arguments = Array(CommandLine.arguments.dropFirst())
var input = Data()
if arguments.count == 1, let action = arguments.first, ["store", "get", "erase"].contains(action) {
    do throws(CredentialHelperError) {
        input = try HelperProcess.readStandardInput(stopAtBlankLine: false)
    } catch {
        HelperProcess.write(Data("\(error.message)\n".utf8), to: 1)
        exit(1)
    }
}
let outcome = DockerCredentialHelper.run(arguments: arguments, input: input) { (choice: StoreChoice) throws(SecureStoreError) in
    try BuiltinBackends.open(backend: choice.backend, configFile: choice.configFile, creatingStore: choice.creatingStore)
}
input.resetBytes(in: 0..<input.count)
HelperProcess.write(outcome.output, to: 1)
if let message = outcome.diagnostic {
    HelperProcess.write(Data("docker-credential-securestore: \(message)\n".utf8), to: 2)
}
exit(outcome.status)
