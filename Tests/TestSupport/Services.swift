// Whether the tests that need an outside service run, skip or fail: the one place that decides.
//
// Under a plain `swift test` a suite whose service is absent is skipped, and the reason is printed. With
// SECURESTORE_REQUIRE_ALL_BACKENDS=1 (scripts/test.sh and CI set it) every such suite runs, so an absent
// service fails its tests instead of being skipped.
import Foundation
public import Testing

/// An outside service some tests need.
public enum TestService: String, Sendable, CaseIterable {
    /// A D-Bus session bus with a Secret Service (gnome-keyring) on it; scripts/with-keyring.sh starts one.
    case secretService = "Secret Service"
    /// The throwaway PostgreSQL server of scripts/with-postgres.sh (its URL in SECURESTORE_TEST_POSTGRES_URL).
    case postgres = "PostgreSQL"

    /// The variable that turns every skip into a failure.
    public static let requireAllVariable = "SECURESTORE_REQUIRE_ALL_BACKENDS"

    /// Whether SECURESTORE_REQUIRE_ALL_BACKENDS=1 is set.
    public static var requireAll: Bool { ProcessInfo.processInfo.environment[requireAllVariable] == "1" }

    /// Why the service is absent, or nil when it is there. Worked out once per process.
    public var absence: String? {
        switch self {
        case .secretService: Self.secretServiceAbsence
        case .postgres: Self.postgresAbsence
        }
    }

    /// Whether tests needing this service run: it is there, or every backend is required (then its absence
    /// fails them, with the service's own error).
    public var shouldRun: Bool { absence == nil || Self.requireAll }

    /// What a skipped test prints.
    public var skipReason: String {
        "\(rawValue) is not available (\(absence ?? "present")); run scripts/test.sh to start it, "
            + "or set \(Self.requireAllVariable)=1 to make its absence a failure"
    }

    private static let secretServiceAbsence: String? = {
        let env = ProcessInfo.processInfo.environment
        guard let bus = env["DBUS_SESSION_BUS_ADDRESS"], !bus.isEmpty else {
            return "no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set"
        }
        // The name is owned by a running daemon, or the bus can start one.
        let dbusSend = ["/usr/bin/dbus-send", "/bin/dbus-send"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let dbusSend else { return nil }   // cannot ask; the tests themselves will say what is wrong
        for method in ["NameHasOwner string:org.freedesktop.secrets", "ListActivatableNames"] {
            let args = ["--session", "--print-reply", "--reply-timeout=2000", "--dest=org.freedesktop.DBus",
                        "/org/freedesktop/DBus"] + ("org.freedesktop.DBus." + method).split(separator: " ").map(String.init)
            let out = FileManager.default.temporaryDirectory.appendingPathComponent("securestore-dbus-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: out) }
            guard let pid = spawn(dbusSend, args, environment: env, stdout: out.path) else { continue }
            guard reap(pid, timeout: .seconds(5)) == 0,
                  let reply = try? String(contentsOf: out, encoding: .utf8) else { continue }
            if method.hasPrefix("NameHasOwner") ? reply.contains("boolean true") : reply.contains("\"org.freedesktop.secrets\"") {
                return nil
            }
        }
        return "no Secret Service (org.freedesktop.secrets) on the session bus \(bus)"
    }()

    private static let postgresAbsence: String? = {
        let url = ProcessInfo.processInfo.environment["SECURESTORE_TEST_POSTGRES_URL"] ?? ""
        return url.isEmpty ? "SECURESTORE_TEST_POSTGRES_URL is not set: no test server (scripts/with-postgres.sh starts one)" : nil
    }()
}

extension Trait where Self == ConditionTrait {
    /// Runs the test or suite only when `service` is there (or every backend is required); otherwise it is
    /// skipped with the reason printed.
    public static func requires(_ service: TestService) -> Self {
        .enabled(if: service.shouldRun, Comment(rawValue: service.skipReason))
    }
}
