"""A Python keyring backend that keeps passwords with the `securestore` tool (add, get and delete only).

The tool is $SECURESTORE_TOOL (default: securestore on PATH); the store is whatever it selects
(SECURESTORE_CONFIG, ...). Secrets pass through standard input and output, never arguments.
"""
import os
import subprocess

from keyring import errors
from keyring.backend import KeyringBackend


class SecureStoreKeyring(KeyringBackend):
    priority = 1

    @property
    def tool(self):
        return os.environ.get("SECURESTORE_TOOL", "securestore")

    def _run(self, *args, data=b""):
        return subprocess.run([self.tool, *args], input=data, capture_output=True, timeout=60)

    def set_password(self, service, username, password):
        r = self._run("add", "--service", service, "--account", username, "--update-existing",
                      data=password.encode("utf-8"))
        if r.returncode != 0:
            raise errors.PasswordSetError(r.stderr.decode("utf-8", "replace"))

    def get_password(self, service, username):
        r = self._run("get", "--service", service, "--account", username)
        if r.returncode == 1:
            return None
        if r.returncode != 0:
            raise errors.KeyringError(r.stderr.decode("utf-8", "replace"))
        return r.stdout.decode("utf-8")

    def delete_password(self, service, username):
        r = self._run("delete", "--service", service, "--account", username)
        if r.returncode != 0 or r.stdout != b"deleted 1 item(s)\n":
            raise errors.PasswordDeleteError(r.stderr.decode("utf-8", "replace") or r.stdout.decode("utf-8", "replace"))
