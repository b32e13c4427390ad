import SecureStoreCore
import Foundation
internal import CSecret

// MARK: libsecret, loaded at first use

/// libsecret (with the GLib, GObject and GIO it depends on), opened when a connection is first opened
/// (``LibSecret/require()``) rather than linked: a program that never uses the Secret Service never maps
/// them. Linking them would cost every start of every program built with this backend (the `securestore`
/// tool included) about 3–5 ms of CPU for loading and relocating the four libraries, measured with
/// `LD_PRELOAD=libsecret-1.so.0` on `securestore get` of an SQLite store (a 7 ms command); the real headers
/// need pkg-config's include paths, and SwiftPM adds pkg-config's link flags with them. So the part of the
/// API the backend calls is declared in CSecret/glib-subset.h and checked against the real headers by the
/// README's test command (Tests/SecretServiceStoreTests/LibraryTests.swift). A missing libsecret is the
/// backend's `notAvailable` error.
enum LibSecret {
    /// The library file opened, and the Debian package that installs it.
    static let soname = "libsecret-1.so.0"
    static let debianPackage = "libsecret-1-0"

    private static let loaded = load(soname: soname)

    /// Opens `soname` and looks up every function shim.h and this module call, in it or the libraries it depends
    /// on (tests pass a missing name).
    static func load(soname: String) -> LoadedFunctions<ss_glib> {
        LoadedFunctions(soname: soname, for: "secret-service", debianPackage: debianPackage, count: ss_glib_count(),
                        name: { String(cString: ss_glib_name($0)) })
    }

    /// Loads the library once; its `notAvailable` error (every time) when it cannot be loaded.
    static func require() throws(SecureStoreError) {
        try loaded.require()
    }

    /// The looked-up functions; only reached after ``require()`` succeeded.
    fileprivate static var functions: UnsafePointer<ss_glib> { loaded.functions }
}

/// The table shim.h calls through (declared in CSecret/glib-subset.h).
@c(securestore_glib)
func secureStoreGLib() -> UnsafePointer<ss_glib> { LibSecret.functions }

// MARK: Which program answers

/// The program that owns `org.freedesktop.secrets` on the session bus (gnome-keyring, KeePassXC, KWallet, …),
/// named in ``SecretServiceBackend/provider()``, in `securestore backends` and in every error about the
/// daemon, so a user knows which keyring to unlock, restart or configure.
public struct SecretServiceProvider: Sendable, Hashable, CustomStringConvertible {
    /// The product's name ("KeePassXC", "GNOME Keyring", "KWallet") or the program's file name.
    public var name: String
    /// The program's file name (`keepassxc`, `gnome-keyring-daemon`), nil when it could not be read.
    public var program: String?
    /// The owner's process id; nil when no process owns the name.
    public var pid: Int32?
    /// When nothing owns the name: whether the bus would start a Secret Service on the first call.
    public var activatable: Bool

    public var description: String {
        guard let pid else {
            return activatable ? "no Secret Service is running (D-Bus activation would start one on first use)"
                : "no Secret Service is running"
        }
        return program.map { $0 == name ? "\(name) (pid \(pid))" : "\(name) (\($0), pid \(pid))" } ?? "\(name) (pid \(pid))"
    }

    /// Asks the session bus (never the daemon itself, and never starting one).
    public static func current() -> SecretServiceProvider? {
        // Without a bus address, asking would autolaunch a bus (dbus-launch when DISPLAY is set): never.
        guard let bus = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"], !bus.isEmpty,
              (try? LibSecret.require()) != nil else { return nil }
        let timeout = SecretServiceBackend.callTimeoutMilliseconds
        let pid = ss_service_pid(timeout)
        guard pid > 0 else {
            return SecretServiceProvider(name: "none", program: nil, pid: nil, activatable: ss_service_activatable(timeout) == 1)
        }
        let program = Self.program(of: Int32(pid))
        return SecretServiceProvider(name: program.map(Self.productName) ?? "unknown program", program: program,
                                     pid: Int32(pid), activatable: false)
    }

    /// The file name of the process's executable (from its command line, as `ps` shows it).
    static func program(of pid: Int32) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else { return nil }
        let first = data.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false).first ?? data[...]
        let path = String(decoding: first, as: UTF8.self)
        return path.split(separator: "/").last.map(String.init)
    }

    /// Known providers' product names.
    static func productName(_ program: String) -> String {
        switch program {
        case "gnome-keyring-daemon": "GNOME Keyring"
        case "keepassxc", "KeePassXC": "KeePassXC"
        case "kwalletd5", "kwalletd6", "ksecretd": "KWallet"
        default: program
        }
    }
}
