import SecureStoreCLI

/// Fuzz target (e): the `securestore` command line (`ArgumentParser.parse`, the table-driven parser, with
/// no I/O). The bytes are split at NUL into arguments (argv cannot hold a NUL), raw, so invalid UTF-8 reaches
/// the parser as it would from the kernel.
///
/// Invariants: parsing never crashes and always answers; a usage error has a message; an argument that is not
/// UTF-8 is always an error; a command line that parsed, rendered again as `--name VALUE` and as
/// `--name=VALUE`, parses to the same command and request; every option it holds is in the table for its
/// command, a non-repeatable option appears once, and an operand (`completions bash`) is one its command lists.
public enum CLIArgumentsExercise {
    public static let name = "cli"

    public static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        let argv = bytes.split(separator: 0, omittingEmptySubsequences: false).prefix(64).map { Array($0) }
        let outcome = ArgumentParser.parse(argv)
        let allText = argv.allSatisfy { String(validating: $0, as: UTF8.self) != nil }
        switch outcome {
        case .failure(let error):
            if error.message.isEmpty { throw FuzzFinding(name, "a usage error without a message") }
        case .success(let invocation):
            guard allText else { throw FuzzFinding(name, "accepted an argument that is not UTF-8: \(invocation)") }
            guard case .run(let parsed) = invocation else { return }
            guard let command = CLITable.command(named: parsed.command) else {
                throw FuzzFinding(name, "parsed the unknown command \(parsed.command)")
            }
            for option in parsed.options {
                guard let spec = command.option(named: option.name), spec.name != CLITable.help.name else {
                    throw FuzzFinding(name, "\(parsed.command) accepted --\(option.name), which its table does not list")
                }
                if (option.value != nil) != spec.takesValue {
                    throw FuzzFinding(name, "--\(option.name) parsed with the wrong kind of value")
                }
                if !spec.repeatable, parsed.options.filter({ $0.name == option.name }).count > 1 {
                    throw FuzzFinding(name, "--\(option.name) accepted twice")
                }
            }
            if parsed.operands.count > (command.operandName == nil ? 0 : 1)
                || !parsed.operands.allSatisfy(command.operands.contains) {
                throw FuzzFinding(name, "\(parsed.command) accepted the operands \(parsed.operands), which its table does not allow")
            }
            for inline in [false, true] {
                let again = ArgumentParser.parse(parsed.arguments(inline: inline))
                guard case .success(.run(let reparsed)) = again, reparsed == parsed else {
                    throw FuzzFinding(name, "\(parsed.arguments(inline: inline)) (inline: \(inline)) does not parse back "
                        + "to the same command: \(again)")
                }
            }
        }
    }
}
