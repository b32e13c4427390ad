"""keyring's own backend suite (BackendBasicTests) against the installed backend, then what this backend adds:
its entry point, keyring's choice among backends, secrets as bytes, and its errors.

Run by scripts/python-check.sh in a virtual environment where `pip install ./python/keyrings-securestore`
installed it, on a scratch store (XDG_DATA_HOME/XDG_CONFIG_HOME in a temporary folder).
"""
import os
import subprocess
import sys

import keyring
import keyring.backend
import pytest
from keyring.testing.backend import BackendBasicTests

import keyrings.securestore
from keyrings.securestore import SecureStoreError, SecureStoreKeyring, find_tool


class TestBackendBasic(BackendBasicTests):
    """keyring's own suite, unchanged."""

    def init_keyring(self):
        return SecureStoreKeyring()


def tool():
    path = find_tool()
    assert path is not None, "securestore is not on PATH and SECURESTORE_TOOL is unset"
    return path


def run(*args, data=b""):
    return subprocess.run([tool(), *args], input=data, capture_output=True, timeout=60)


def python(code, env):
    """Runs `code` in a fresh interpreter of this environment (keyring chooses its backend once per process)."""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_installed_not_imported_from_the_source_tree():
    assert "site-packages" in keyrings.securestore.__file__, keyrings.securestore.__file__


def test_registered_through_the_entry_point():
    names = [type(k).__name__ for k in keyring.backend.get_all_keyring()]
    assert "SecureStoreKeyring" in names
    from importlib.metadata import entry_points
    eps = entry_points(group="keyring.backends")
    assert any(ep.value == "keyrings.securestore" for ep in eps)


CHOSEN = """
import keyring, keyring.backends.chainer as c
k = keyring.get_keyring()
chain = c.ChainerBackend.backends if isinstance(k, c.ChainerBackend) else [k]
print(" ".join(f"{type(b).__module__}.{type(b).__name__}" for b in chain))
"""


def test_headless_first_above_cryptfile():
    """No session bus: the desktop keyring is not viable; ours comes before keyrings.cryptfile (2.5)."""
    env = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/bus"
    env.pop("PYTHON_KEYRING_BACKEND", None)
    chain = python(CHOSEN, env).split()
    assert chain[0] == "keyrings.securestore.SecureStoreKeyring", chain
    if any("cryptfile" in b for b in chain):
        assert chain.index("keyrings.securestore.SecureStoreKeyring") < [i for i, b in enumerate(chain) if "cryptfile" in b][0]


@pytest.mark.skipif(not os.environ.get("DBUS_SESSION_BUS_ADDRESS"), reason="no session bus (run under scripts/with-keyring.sh)")
def test_desktop_keyring_first_on_a_desktop():
    """A reachable Secret Service (priority 5) comes before ours (3)."""
    env = dict(os.environ)
    env.pop("PYTHON_KEYRING_BACKEND", None)
    chain = python(CHOSEN, env).split()
    assert chain[0] == "keyring.backends.SecretService.Keyring", chain
    assert "keyrings.securestore.SecureStoreKeyring" in chain, chain


def test_not_viable_without_the_tool():
    env = dict(os.environ, SECURESTORE_TOOL="/nonexistent/securestore")
    out = python("""
import keyring.backend
from keyrings.securestore import SecureStoreKeyring
print(any(isinstance(k, SecureStoreKeyring) for k in keyring.backend.get_all_keyring()))
try:
    SecureStoreKeyring.priority
except RuntimeError as e:
    print(e)
""", env)
    assert out.splitlines()[0] == "False"
    assert "securestore tool is not installed" in out


def test_missing_tool_is_a_clear_error():
    k = SecureStoreKeyring().with_properties(tool="/nonexistent/securestore")
    with pytest.raises(SecureStoreError, match="not found"):
        k.get_password("svc", "user")


def test_secret_goes_through_stdin_byte_for_byte():
    k = SecureStoreKeyring()
    password = "  line one\nline two\n\x00 é €\n\n"
    k.set_password("bytes.example", "alice", password)
    assert k.get_password("bytes.example", "alice") == password
    assert k.get_secret("bytes.example", "alice") == password.encode("utf-8")
    assert run("get", "--class", "generic", "--service", "bytes.example", "--account", "alice").stdout == password.encode()
    k.delete_password("bytes.example", "alice")


def test_bytes_that_are_not_text():
    k = SecureStoreKeyring()
    raw = bytes(range(256))
    k.set_secret("binary.example", "bob", raw)
    assert k.get_secret("binary.example", "bob") == raw
    with pytest.raises(SecureStoreError, match="not UTF-8"):
        k.get_password("binary.example", "bob")
    with pytest.raises(TypeError):
        k.set_secret("binary.example", "bob", "text")
    k.delete_password("binary.example", "bob")


def test_values_that_look_like_options():
    k = SecureStoreKeyring()
    k.set_password("--help", "-h", "--version")
    assert k.get_password("--help", "-h") == "--version"
    assert k.get_credential("--help", None).username == "-h"
    k.delete_password("--help", "-h")


def test_get_credential_without_username_finds_the_account():
    k = SecureStoreKeyring()
    assert k.get_credential("index.example", None) is None
    k.set_password("index.example", "carol", "pw")
    cred = k.get_credential("index.example", None)
    assert (cred.username, cred.password) == ("carol", "pw")
    k.delete_password("index.example", "carol")


def test_too_large_secret_is_refused_with_the_tools_reason():
    k = SecureStoreKeyring()
    with pytest.raises(keyring.errors.PasswordSetError, match="usage or bad parameter"):
        k.set_password("big.example", "dave", "x" * (1024 * 1024 + 1))
    assert k.get_password("big.example", "dave") is None


def test_unknown_backend_is_reported():
    env = dict(os.environ, SECURESTORE_BACKEND="no-such-backend")
    out = python("""
from keyrings.securestore import SecureStoreKeyring, SecureStoreError
try:
    SecureStoreKeyring().get_password("s", "u")
except SecureStoreError as e:
    print(e.status, e)
""", env)
    assert out.startswith("2 securestore get failed"), out
    assert "no-such-backend" in out, out


def test_delete_missing_raises_password_delete_error():
    with pytest.raises(keyring.errors.PasswordDeleteError, match="no password"):
        SecureStoreKeyring().delete_password("absent.example", "nobody")


def test_properties_from_the_environment(monkeypatch):
    monkeypatch.setenv("KEYRING_PROPERTY_TIMEOUT", "0.000001")
    k = SecureStoreKeyring()
    k.set_properties_from_env()
    with pytest.raises(SecureStoreError, match="did not finish"):
        k.get_password("svc", "user")
    monkeypatch.setenv("KEYRING_PROPERTY_TOOL", "/nonexistent/securestore")
    k = SecureStoreKeyring()
    k.set_properties_from_env()
    with pytest.raises(SecureStoreError, match="not found"):
        k.get_password("svc", "user")
