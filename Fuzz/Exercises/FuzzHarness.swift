public import Foundation

/// What the fuzz executables share: run one input (a finding aborts, so libFuzzer records the input) and,
/// without libFuzzer, replay files and folders given on the command line.
public enum FuzzHarness {
    public static func exercise(_ run: ([UInt8]) throws(FuzzFinding) -> Void, _ input: UnsafeBufferPointer<UInt8>) {
        do throws(FuzzFinding) {
            try run(Array(input))
        } catch {
            FileHandle.standardError.write(Data("FUZZ FINDING: \(error)\n".utf8))
            abort()
        }
    }

    /// Replays every file named (folders: every file inside); returns the exit status.
    public static func replay(_ run: ([UInt8]) throws(FuzzFinding) -> Void, arguments: [String]) -> Int32 {
        var count = 0
        for file in FuzzCorpus.files(in: arguments) {
            guard let data = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("cannot read \(file)\n".utf8))
                return 2
            }
            do throws(FuzzFinding) {
                try run(Array(data))
                count += 1
            } catch {
                FileHandle.standardError.write(Data("\(file): \(error)\n".utf8))
                return 1
            }
        }
        print("replayed \(count) input(s), no finding")
        return 0
    }
}

/// The inputs kept in the repository: `Fuzz/corpus/<name>/` and `Fuzz/regressions/<name>/`.
public enum FuzzCorpus {
    /// The repository's `Fuzz` folder (found from this source file's location).
    public static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Every corpus and regression input of harness `name`, sorted.
    public static func inputs(of name: String) -> [String] {
        files(in: [root.appendingPathComponent("corpus/\(name)").path,
                   root.appendingPathComponent("regressions/\(name)").path])
    }

    /// The files among `paths`, expanding folders (non-recursively, skipping dot files).
    public static func files(in paths: [String]) -> [String] {
        var out: [String] = []
        for path in paths {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { continue }
            if isDir.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                out += names.filter { !$0.hasPrefix(".") }.sorted().map { path + "/" + $0 }
            } else {
                out.append(path)
            }
        }
        return out
    }
}

/// Every exercise by harness name (the names of `Fuzz/corpus/<name>` and of the `fuzz-<name>` executables).
public enum FuzzExercises {
    public static let names: [String] = [SecItemExercise.name, ConfigExercise.name, RecordExercise.name, ExportExercise.name,
                                           CLIArgumentsExercise.name]

    /// Runs harness `name` on `bytes`.
    public static func run(_ name: String, _ bytes: [UInt8]) throws(FuzzFinding) {
        switch name {
        case SecItemExercise.name: try SecItemExercise.run(bytes)
        case ConfigExercise.name: try ConfigExercise.run(bytes)
        case RecordExercise.name: try RecordExercise.run(bytes)
        case ExportExercise.name: try ExportExercise.run(bytes)
        case CLIArgumentsExercise.name: try CLIArgumentsExercise.run(bytes)
        default: throw FuzzFinding(name, "no such harness")
        }
    }
}
