import Foundation
import Testing
import TestSupport

/// Python keyring's own backend test suite (keyring.testing.backend.BackendBasicTests), run by
/// Tests/KeyringAdapter through the keyring backend users install (python/keyrings-securestore, loaded from the
/// source tree), which calls `securestore add`, `get`, `find` and `delete`: a third party's idea of what a
/// password store must do, met through the command line. Needs Debian's python3-keyring and python3-pytest
/// (scripts/deps.sh installs them); scripts/python-check.sh runs the pip-installed backend with PyPI's keyring.
@Suite("securestore CLI under Python keyring's backend tests", .serialized)
struct KeyringAdapterTests {
    static let python = "/usr/bin/python3"

    func runSuite(_ tool: Tool) throws {
        let check = Process()
        check.executableURL = URL(fileURLWithPath: Self.python)
        check.arguments = ["-c", "import keyring.testing.backend, pytest"]
        check.standardError = FileHandle.nullDevice
        try check.run()
        check.waitUntilExit()
        guard check.terminationStatus == 0 else {
            Issue.record("\(Self.python) lacks keyring or pytest: install python3-keyring python3-pytest (scripts/deps.sh does)")
            return
        }
        var env = tool.environment
        env["SECURESTORE_TOOL"] = try Tool.path()
        let adapter = packageRoot.appendingPathComponent("Tests/KeyringAdapter").path
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("keyring-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        guard let pid = spawn(Self.python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", adapter, adapter],
                              environment: env, stdout: log) else {
            throw Tool.ToolError(message: "cannot start \(Self.python)")
        }
        let status = reap(pid, timeout: .seconds(300))
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        print("[keyring] \(output.split(separator: "\n").last ?? "")")
        #expect(status == 0, "\(output)")
        #expect(output.contains(" passed") && !output.contains("failed"), "\(output)")
    }

    @Test("keyring's backend suite passes through the CLI on SQLite")
    func sqlite() throws { try runSuite(try Tool.sqlite()) }

    @Test("keyring's backend suite passes through the CLI on the Secret Service", .requires(.secretService))
    func secretService() throws { try runSuite(try Tool.secretService()) }
}
