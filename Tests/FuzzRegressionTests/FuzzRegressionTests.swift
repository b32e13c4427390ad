import Foundation
import Testing
import SecureStoreFuzzing
import SecureStoreCLI

/// Every seed and every input a fuzzer ever crashed on (Fuzz/corpus/<name>, Fuzz/regressions/<name>),
/// replayed through the same exercise functions the libFuzzer harnesses call.
@Suite("Fuzz regressions", .serialized)
struct FuzzRegressionTests {
    @Test("every corpus and regression input runs without a finding", arguments: FuzzExercises.names)
    func replay(harness name: String) throws {
        let inputs = FuzzCorpus.inputs(of: name)
        #expect(!inputs.isEmpty, "no corpus for \(name) under \(FuzzCorpus.root.path)")
        for file in inputs {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            do throws(FuzzFinding) {
                try FuzzExercises.run(name, bytes)
            } catch {
                Issue.record("\(file): \(error)")
            }
        }
        print("[fuzz regressions] \(name): \(inputs.count) input(s)")
    }
}

@Suite("Fuzz seeds")
struct FuzzSeedTests {
    /// The export seed is a real export: it opens read-only with the fuzz passphrase and holds three items.
    @Test("the export seed is a valid export of three items")
    func exportSeed() throws {
        let seed = FuzzCorpus.root.appendingPathComponent("corpus/export/valid-export.db").path
        if ProcessInfo.processInfo.environment["SECURESTORE_FUZZ_MAKE_SEEDS"] == "1" {
            try FileManager.default.createDirectory(atPath: (seed as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try ExportExercise.makeSeed(at: seed)
        }
        let count = try ExportExercise.recordCount(seed)
        #expect(count == 3)
    }
}

@Suite("Fuzz dictionaries")
struct FuzzDictionaryTests {
    /// `Fuzz/dict/cli.dict` names every command and option of the tool's table, so the fuzzer knows them all.
    @Test("the cli dictionary lists every command and option of CLITable")
    func cliDictionary() throws {
        let path = FuzzCorpus.root.appendingPathComponent("dict/cli.dict").path
        let words = Set(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) })
        var expected = CLITable.commands.map(\.name) + CLITable.globalOptions.map(\.flag) + [CLITable.help.flag]
        for command in CLITable.commands { expected += command.options.map(\.flag) }
        for word in expected { #expect(words.contains(word), "cli.dict lacks \(word)") }
    }
}
