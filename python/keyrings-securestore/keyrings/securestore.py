"""A keyring backend that keeps passwords in SecureStore, through the installed ``securestore`` tool.

The store is the one the tool selects (``securestore backends`` says which and why): by default the encrypted
SQLite file; the desktop keyring (Secret Service) or PostgreSQL when ``SECURESTORE_BACKEND``,
``SECURESTORE_CONFIG`` or the configuration file say so. Every secret passes through the tool's standard input and output as
UTF-8 bytes, never through its arguments or its environment.

Priority (keyring picks the viable backend with the highest): 3, between the desktop keyrings (Secret
Service 5, KWallet 4.9/5.1, libsecret 4.8, macOS and Windows 5) and the file keyrings (keyrings.cryptfile
2.5, keyrings.alt's encrypted file 0.6 and plaintext 0.5). On a desktop whose keyring keyring can reach, that
keyring comes first; on a headless machine, this backend does. Without the tool the backend is not viable
(its priority raises, as keyring's rules ask), so keyring never picks it.

The tool is ``$SECURESTORE_TOOL``, else ``securestore`` on ``PATH``; the ``tool`` property
(``KEYRING_PROPERTY_TOOL`` or ``with_properties(tool=...)``) overrides both for one backend.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess

from keyring import credentials, errors
from keyring.backend import KeyringBackend

try:  # keyring >= 23 depends on jaraco.classes; older ones carried the same helper
    from jaraco.classes import properties
except ImportError:  # pragma: no cover
    from keyring.util import properties

__all__ = ["SecureStoreKeyring", "SecureStoreError", "SecureStoreLocked", "find_tool"]

# The tool's exit statuses (securestore --help; ExitStatus in Sources/SecureStoreCLI).
EXIT_MEANINGS = {
    1: "not found",
    2: "usage or bad parameter",
    3: "duplicate item",
    4: "authentication failed",
    5: "data corrupted or tampered",
    6: "backend unavailable or locked",
    7: "the store is read-only",
    8: "outcome unknown: check before retrying",
    70: "error",
    74: "standard input or output failed",
}
_LOCKED = getattr(errors, "KeyringLocked", errors.KeyringError)


class SecureStoreError(errors.KeyringError):
    """The securestore tool failed; ``status`` is its exit status (None when it could not run)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class SecureStoreLocked(SecureStoreError, _LOCKED):
    """The store is unavailable or locked (exit 6): a passphrase store without its passphrase, the keyring
    daemon or the database server unreachable."""


def find_tool(override: str | None = None) -> str | None:
    """The path of the securestore tool this backend would run, or None."""
    name = override or os.environ.get("SECURESTORE_TOOL") or "securestore"
    if os.sep in name:
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    return shutil.which(name)


class SecureStoreKeyring(KeyringBackend):
    """Passwords in SecureStore (``securestore`` tool): generic-password items, service and account."""

    #: Seconds to wait for the tool (it may wait for a file lock, the keyring daemon or a database server);
    #: KEYRING_PROPERTY_TIMEOUT sets it too.
    timeout = 60.0
    #: Overrides $SECURESTORE_TOOL and PATH for this backend (KEYRING_PROPERTY_TOOL sets it too).
    tool: str | None = None

    @properties.classproperty
    def priority(cls) -> float:
        if find_tool() is None:
            raise RuntimeError(
                "the securestore tool is not installed: install the securestore package, or run "
                "scripts/install.sh, or set SECURESTORE_TOOL to its path"
            )
        return 3

    # MARK: keyring's API (text)

    def get_password(self, service: str, username: str) -> str | None:
        secret = self.get_secret(service, username)
        if secret is None:
            return None
        try:
            return secret.decode("utf-8")
        except UnicodeDecodeError:
            raise SecureStoreError(
                f"the secret of {service!r}/{username!r} is {len(secret)} bytes that are not UTF-8 text: "
                "read it with get_secret() (bytes) or `securestore get`"
            ) from None

    def set_password(self, service: str, username: str, password: str) -> None:
        try:
            data = password.encode("utf-8")
        except UnicodeEncodeError as e:
            raise errors.PasswordSetError(f"the password cannot be encoded as UTF-8: {e}") from None
        try:
            self.set_secret(service, username, data)
        except SecureStoreError as e:
            raise errors.PasswordSetError(str(e)) from e

    def delete_password(self, service: str, username: str) -> None:
        r = self._run("delete", *self._item(service, username))
        if r.returncode == 1:
            raise errors.PasswordDeleteError(f"no password for {service!r}/{username!r}")
        if r.returncode != 0:
            raise errors.PasswordDeleteError(self._message("delete", r))

    def get_credential(self, service: str, username: str | None) -> credentials.Credential | None:
        """With a username, its password; without one, the first account stored for the service (pip asks so)."""
        if username is not None:
            return super().get_credential(service, username)
        r = self._run("find", "--class", "generic", f"--service={service}", "--json")
        if r.returncode == 1:
            return None
        if r.returncode != 0:
            raise self._error("find", r)
        try:
            items = json.loads(r.stdout)
        except ValueError:
            raise SecureStoreError(f"securestore find printed what is not JSON: {r.stdout[:200]!r}") from None
        accounts = sorted({item.get("account", "") for item in items if isinstance(item.get("account", ""), str)})
        for account in accounts:
            password = self.get_password(service, account)
            if password is not None:
                return credentials.SimpleCredential(account, password)
        return None

    # MARK: bytes

    def get_secret(self, service: str, username: str) -> bytes | None:
        """The stored secret byte for byte, or None when there is none."""
        r = self._run("get", *self._item(service, username))
        if r.returncode == 1:
            return None
        if r.returncode != 0:
            raise self._error("get", r)
        return r.stdout

    def set_secret(self, service: str, username: str, secret: bytes) -> None:
        """Stores ``secret`` (at most 1 MiB) as the password of service/username, replacing any."""
        if not isinstance(secret, (bytes, bytearray, memoryview)):
            raise TypeError(f"secret must be bytes, not {type(secret).__name__}")
        r = self._run("add", *self._item(service, username), "--update-existing", data=bytes(secret))
        if r.returncode != 0:
            raise self._error("add", r)

    # MARK: the tool

    @staticmethod
    def _item(service: str, username: str) -> list[str]:
        # --name=VALUE keeps a value that starts with '-' a value; an empty username is the empty account.
        return ["--class", "generic", f"--service={service}", f"--account={username}"]

    def _run(self, *args: str, data: bytes = b"") -> subprocess.CompletedProcess:
        tool = find_tool(self.tool)
        if tool is None:
            raise SecureStoreError(
                f"the securestore tool was not found ({self.tool or os.environ.get('SECURESTORE_TOOL') or 'securestore on PATH'}): "
                "install the securestore package or set SECURESTORE_TOOL", None)
        timeout = float(self.timeout)   # KEYRING_PROPERTY_TIMEOUT arrives as text
        try:
            return subprocess.run([tool, *args], input=data, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise SecureStoreError(
                f"securestore {args[0]} did not finish in {timeout:g} s (a file lock, the keyring daemon or "
                "the database server may be holding it)", None) from None
        except OSError as e:
            raise SecureStoreError(f"cannot run {tool}: {e}", None) from None

    @staticmethod
    def _message(command: str, r: subprocess.CompletedProcess) -> str:
        meaning = EXIT_MEANINGS.get(r.returncode, f"exit {r.returncode}")
        detail = r.stderr.decode("utf-8", "replace").strip()
        return f"securestore {command} failed ({meaning}, exit {r.returncode})" + (f": {detail}" if detail else "")

    def _error(self, command: str, r: subprocess.CompletedProcess) -> errors.KeyringError:
        kind = SecureStoreLocked if r.returncode == 6 else SecureStoreError
        return kind(self._message(command, r), r.returncode)
