#!/usr/bin/env python3
"""Times the peers of SecureStore with the benchmark's operations and prints JSON (run by securestore-bench --peers).

Peers:
  python-keyring SecretService  keyring's SecretService backend (secretstorage/jeepney) on the session bus's
                                Secret Service (the same gnome-keyring daemon as SecureStore's rows)
  keyrings.cryptfile            CryptFileKeyring: an encrypted file (Argon2id + AES per value); its file lives
                                in a temporary folder and its keyring_key is set in code (no prompt)

Operations per N: set N new items (each timed), get random items, delete distinct items (at most half of N).
Secrets are 32 ASCII characters (keyring stores text). Timings are single operations, in microseconds.

Usage: peers.py --out FILE --ss-counts 100,1000 --cryptfile-count 10 --get-samples 200 --write-samples 50
"""
import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
import traceback


def summary(ns):
    s = sorted(ns)
    n = len(s)
    if n == 0:
        return None
    median = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    p99 = s[min(n - 1, int(0.99 * n))]
    total = sum(s)
    return {"samples": n, "medianMicros": median / 1000.0, "p99Micros": p99 / 1000.0,
            "opsPerSecond": n * 1e9 / total if total else 0.0}


def run_ops(keyring, tag, n, get_samples, write_samples, seed, progress):
    rnd = random.Random(seed)
    services = ["peer-%s-svc-%d" % (tag, i) for i in range(10)]
    secret = "".join(rnd.choice("0123456789abcdef") for _ in range(32))
    ops = {}
    times = []
    for i in range(n):
        if progress and i % 50 == 0:
            progress("set %d/%d" % (i, n))
        t = time.perf_counter_ns()
        keyring.set_password(services[i % 10], "acct-%d" % i, secret)
        times.append(time.perf_counter_ns() - t)
    ops["set"] = summary(times)
    times = []
    for _ in range(get_samples):
        i = rnd.randrange(n)
        t = time.perf_counter_ns()
        got = keyring.get_password(services[i % 10], "acct-%d" % i)
        times.append(time.perf_counter_ns() - t)
        if got != secret:
            raise RuntimeError("get returned a wrong secret")
    ops["get"] = summary(times)
    order = list(range(n))
    rnd.shuffle(order)
    deletions = max(1, min(write_samples, n // 2))
    times = []
    for i in order[:deletions]:
        t = time.perf_counter_ns()
        keyring.delete_password(services[i % 10], "acct-%d" % i)
        times.append(time.perf_counter_ns() - t)
    ops["delete"] = summary(times)
    return ops, [(services[i % 10], "acct-%d" % i) for i in order[deletions:]]


def secret_service(counts, args, progress):
    from keyring.backends import SecretService
    import secretstorage
    kr = SecretService.Keyring()
    kr.priority  # raises when no Secret Service is reachable
    results = []
    for n in counts:
        tag = "%d-%d" % (os.getpid(), n)
        ops, left = run_ops(kr, tag, n, min(args.get_samples, max(n, 20)), args.write_samples, n, progress)
        # Untimed clean-up: remove what is left with one search, so later cases start from the same keyring.
        bus = secretstorage.dbus_init()
        try:
            collection = secretstorage.get_default_collection(bus)
            for item in collection.get_all_items():
                if item.get_attributes().get("service", "").startswith("peer-%s-" % tag):
                    item.delete()
        finally:
            bus.close()
        results.append({"peer": "python-keyring SecretService", "n": n, "secretBytes": 32, "ops": ops})
    return results


def cryptfile(n, args, progress):
    from keyrings.cryptfile.cryptfile import CryptFileKeyring
    folder = tempfile.mkdtemp(prefix="securestore-peers-")
    try:
        kr = CryptFileKeyring()
        kr.file_path = os.path.join(folder, "cryptfile.cfg")
        kr.keyring_key = "securestore-bench-cryptfile-key"
        ops, _ = run_ops(kr, "cryptfile", n, n, n, 7, progress)
        return [{"peer": "keyrings.cryptfile", "n": n, "secretBytes": 32, "ops": ops}]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--ss-counts", default="100,1000")
    p.add_argument("--cryptfile-count", type=int, default=10)
    p.add_argument("--get-samples", type=int, default=200)
    p.add_argument("--write-samples", type=int, default=50)
    p.add_argument("--progress", action="store_true")
    args = p.parse_args()
    counts = [int(c) for c in args.ss_counts.split(",") if c]

    def progress_for(name):
        if not args.progress:
            return None
        return lambda text: print("peers: %s: %s" % (name, text), file=sys.stderr, flush=True)

    import keyring
    versions = {"python": sys.version.split()[0], "keyring": getattr(keyring, "__version__", "?")}
    try:
        from importlib.metadata import version
        versions["keyring"] = version("keyring")
        versions["secretstorage"] = version("secretstorage")
        versions["keyrings.cryptfile"] = version("keyrings.cryptfile")
    except Exception:
        pass
    out = {"versions": versions, "results": [], "failures": []}
    for name, fn in [("python-keyring SecretService", lambda: secret_service(counts, args, progress_for("keyring"))),
                     ("keyrings.cryptfile", lambda: cryptfile(args.cryptfile_count, args, progress_for("cryptfile")))]:
        try:
            out["results"] += fn()
        except Exception as e:  # reported, not fatal: the other peer still runs
            out["failures"].append({"peer": name, "reason": "%s: %s" % (type(e).__name__, e),
                                    "trace": traceback.format_exc(limit=3)})
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
