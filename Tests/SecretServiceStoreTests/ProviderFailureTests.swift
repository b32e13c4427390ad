import Testing
import Foundation
import SecureStoreCore
import SecureStoreSecretService
import TestSupport

/// The Secret Service tests that stop, kill or lock a provider: each runs the probe executable in a private bus
/// with its own provider (so they never disturb the daemon other tests use, nor each other), and most of their
/// time is spent waiting for a deadline or a restart. Unlike the suite on the shared daemon they run at once.
@Suite("SecretService providers stopped, killed and locked", .timeLimit(.minutes(2)), .requires(.secretService))
struct SecretServiceProviderFailureTests {
    @Test("daemon stopped as CreateItem reaches it: outcomeUnknown (never notAvailable), and the item is there once it continues")
    func stoppedAtCreate() throws {
        let (steps, measures) = try SecretServiceStoreTests.privateBusProbeOutput("stopAtCreate")
        #expect(steps["add"]?.code == "ok", "\(String(describing: steps["add"]))")
        #expect(steps["stoppedAdd"]?.code == "outcomeUnknown", "\(String(describing: steps["stoppedAdd"]))")
        #expect(steps["stoppedAdd"]?.message.contains("may or may not") == true)
        // gnome-keyring creates it once it continues (so "nothing happened" would have been wrong); KeePassXC answers
        // CreateItem with a prompt that nobody completes after the caller gave up, so it creates nothing.
        #expect(measures["existsAfter"] == (onKeePassXC ? "0" : "1"), "\(measures)")
        #expect(steps["afterContinue"]?.code == "ok", "\(String(describing: steps["afterContinue"]))")
    }

    @Test("daemon stopped at the first Delete of 4: outcomeUnknown after one wait; the report matches what the daemon did")
    func stoppedAtDelete() throws {
        let (steps, measures) = try SecretServiceStoreTests.privateBusProbeOutput("stopAtDelete")
        let stopped = try #require(steps["stoppedDelete"])
        #expect(stopped.code == "outcomeUnknown", "\(stopped)")
        // One wait for the whole delete: the calls in flight (the write window, 2) end with the first silence and
        // the rest are never sent (not 4 call timeouts of 5 s, nor an undo that waits again per item).
        #expect(stopped.message.contains("0 of 4 changes confirmed before; 2 sent without an answer; 2 not sent"), "\(stopped.message)")
        #expect(stopped.ms < 3 * Int(SecretServiceBackend.callTimeoutMilliseconds), "waited more than once: \(stopped.ms) ms")
        // The 2 never sent are still there; the 2 sent were carried out once gnome-keyring continued (KeePassXC
        // answers each Delete with a prompt that nobody completes after the caller gave up: it deletes nothing).
        #expect(measures["remainingAfter"] == (onKeePassXC ? "4" : "2"), "\(measures)")
        #expect(steps["afterContinue"]?.code == "ok", "\(String(describing: steps["afterContinue"]))")
    }

    @Test("daemon killed at the 10th CreateItem of a 30-item import: outcomeUnknown; the import run again finishes the job")
    func killedDuringImport() throws {
        let (steps, measures) = try SecretServiceStoreTests.privateBusProbeOutput("killAtImport")
        #expect(steps["killedImport"]?.code == "outcomeUnknown", "\(String(describing: steps["killedImport"]))")
        #expect(steps["secondImport"]?.code == "ok", "\(String(describing: steps["secondImport"]))")
        let before = Int(measures["before"] ?? "") ?? -1, added = Int(measures["added"] ?? "") ?? -1
        // gnome-keyring keeps the 9 it stored; KeePassXC (saving on exit, not after every change) loses them.
        #expect(before == 9 || (onKeePassXC && before == 0), "\(measures)")
        #expect(before + added == 30 && measures["count"] == "30", "\(measures)")
    }

    @Test("the provider killed mid-run: clear error, then works again after a restart")
    func daemonKilled() throws {
        let steps = try SecretServiceStoreTests.privateBusProbe("killed")
        #expect(steps["open"]?.code == "ok")
        #expect(steps["add"]?.code == "ok")
        #expect(steps["afterKill"]?.code == "notAvailable")
        #expect(steps["afterKill"]?.message.contains("Secret Service not available") == true)
        #expect(steps["afterRestart"]?.code == "ok", "\(String(describing: steps["afterRestart"]))")
        #expect(steps["clear"]?.code == "ok")
    }

    @Test("the provider not answering a read: notAvailable within the call timeout, then works again")
    func daemonStopped() throws {
        let steps = try SecretServiceStoreTests.privateBusProbe("stopped")
        #expect(steps["add"]?.code == "ok")
        #expect(steps["stoppedCopy"]?.code == "notAvailable", "\(String(describing: steps["stoppedCopy"]))")
        #expect((steps["stoppedCopy"]?.ms ?? .max) < 15_000, "not bounded")
        #expect(steps["afterContinue"]?.code == "ok", "\(String(describing: steps["afterContinue"]))")
    }

    @Test("locked collection: interactionNotAllowed quickly, never a prompt; works after unlocking")
    func lockedCollection() throws {
        let steps = try SecretServiceStoreTests.privateBusProbe("locked")
        #expect(steps["add"]?.code == "ok")
        for name in ["lockedCopy", "lockedMissing", "lockedAdd", "lockedClear", "lockedOpen", "lockedOpenAdd"] {
            #expect(steps[name]?.code == "interactionNotAllowed", "\(name): \(String(describing: steps[name]))")
            #expect((steps[name]?.ms ?? .max) < 5000, "\(name) took too long")
        }
        #expect(steps["afterUnlock"]?.code == "ok", "\(String(describing: steps["afterUnlock"]))")
    }
}
