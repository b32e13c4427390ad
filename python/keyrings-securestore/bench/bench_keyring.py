"""keyring.get_password and keyring.set_password through this backend against keyrings.cryptfile, on this
machine: what a Python program on a headless server pays per secret with each.

Usage: python bench_keyring.py [--runs N] [--json FILE]   (in an environment with keyring, keyrings.cryptfile
and keyrings-securestore installed; scripts/python-check.sh runs it). Both stores live in a scratch folder.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time

import keyring
from importlib.metadata import version


def measure(fn, runs):
    fn(0)   # warm-up: creates the store or file, loads code
    times = []
    for i in range(runs):
        t = time.perf_counter()
        fn(i + 1)
        times.append((time.perf_counter() - t) * 1000)
    return {"median_ms": statistics.median(times), "min_ms": min(times),
            "p90_ms": sorted(times)[max(0, int(len(times) * 0.9) - 1)], "runs": runs}


def bench(backend, runs):
    keyring.set_keyring(backend)
    keyring.set_password("bench.example", "alice", "initial")
    out = {
        "get_password": measure(lambda i: keyring.get_password("bench.example", "alice"), runs),
        "set_password": measure(lambda i: keyring.set_password("bench.example", "alice", f"token-{i}"), runs),
    }
    assert keyring.get_password("bench.example", "alice") == f"token-{runs}"
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json")
    args = parser.parse_args()
    from keyrings.cryptfile.cryptfile import CryptFileKeyring
    from keyrings.securestore import SecureStoreKeyring, find_tool

    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-keyring-") as d:
        os.environ["XDG_DATA_HOME"], os.environ["XDG_CONFIG_HOME"] = f"{d}/data", f"{d}/config"
        os.environ.pop("SECURESTORE_CONFIG", None)
        os.environ.setdefault("SECURESTORE_BACKEND", "sqlite")   # the headless default, even under a desktop bus
        ours = SecureStoreKeyring()
        results["securestore (keyrings-securestore, SQLite store)"] = bench(ours, args.runs)
        tool = find_tool()
        results["securestore get (the tool alone, for reference)"] = {
            "get_password": measure(lambda i: subprocess.run([tool, "get", "--service", "bench.example",
                                                              "--account", "alice"], capture_output=True, check=True),
                                    args.runs)}
        crypt = CryptFileKeyring()
        crypt.file_path = f"{d}/cryptfile_pass.cfg"
        crypt.keyring_key = "benchmark passphrase"
        results["keyrings.cryptfile (CryptFileKeyring)"] = bench(crypt, max(5, args.runs // 3))

    print(f"keyring {version('keyring')}, keyrings.cryptfile {version('keyrings.cryptfile')}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs; milliseconds per call")
    print(f"{'backend':55} {'op':13} {'median':>8} {'min':>8} {'p90':>8} runs")
    for name, ops in results.items():
        for op, r in ops.items():
            print(f"{name:55} {op:13} {r['median_ms']:8.1f} {r['min_ms']:8.1f} {r['p90_ms']:8.1f} {r['runs']}")
    ours_get = results["securestore (keyrings-securestore, SQLite store)"]["get_password"]["median_ms"]
    theirs_get = results["keyrings.cryptfile (CryptFileKeyring)"]["get_password"]["median_ms"]
    print(f"get_password: securestore {ours_get:.1f} ms, cryptfile {theirs_get:.1f} ms ({theirs_get / ours_get:.0f}x)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
