"""A real client: pip installs from a local package index that requires a password (pypiserver on 127.0.0.1),
with `pip --keyring-provider import` and the username and password only in the store (not in the URL, pip's
configuration, .netrc or the environment). The same install without the stored credential fails (401).
"""
import base64
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile

import pytest

from keyrings.securestore import find_tool

pytest.importorskip("pypiserver")
passlib_apache = pytest.importorskip("passlib.apache")

USER, PASSWORD = "alice", "index-password-" + base64.b32encode(os.urandom(10)).decode().lower()


def tiny_wheel(folder):
    """A wheel of a one-module package, written by hand (no build backend needed)."""
    name, version = "securestore_pip_probe", "1.0"
    files = {
        f"{name}.py": b"VALUE = 'installed from the password-protected index'\n",
        f"{name}-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{name}-{version}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
        for path, data in files.items()) + f"{name}-{version}.dist-info/RECORD,,\n"
    files[f"{name}-{version}.dist-info/RECORD"] = record.encode()
    path = os.path.join(folder, f"{name}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as z:
        for p, data in files.items():
            z.writestr(p, data)
    return name


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def index():
    work = tempfile.mkdtemp(prefix="pypiserver-")
    packages = os.path.join(work, "packages")
    os.mkdir(packages)
    project = tiny_wheel(packages)
    htpasswd = passlib_apache.HtpasswdFile(os.path.join(work, "htpasswd"), new=True)
    htpasswd.set_password(USER, PASSWORD)
    htpasswd.save()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p", str(port), "-a", "download,list,update",
         "-P", htpasswd.path, packages],
        stdout=open(os.path.join(work, "server.log"), "wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/simple/"
    for _ in range(200):
        try:
            urllib.request.urlopen(url, timeout=1)
        except urllib.error.HTTPError as e:
            if e.code == 401:
                break
        except OSError:
            time.sleep(0.05)
    else:
        server.kill()
        pytest.fail("pypiserver did not start: " + open(os.path.join(work, "server.log")).read())
    yield url, f"127.0.0.1:{port}", project, work
    server.terminate()
    server.wait(10)
    shutil.rmtree(work, ignore_errors=True)


def pip_install(url, project, work):
    target = tempfile.mkdtemp(dir=work)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "NETRC"))}
    env["HOME"] = os.path.join(work, "home")   # no ~/.netrc, no pip.conf
    env["PIP_CONFIG_FILE"] = os.devnull
    env["XDG_DATA_HOME"], env["XDG_CONFIG_HOME"] = os.environ["XDG_DATA_HOME"], os.environ["XDG_CONFIG_HOME"]
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-input", "--no-cache-dir", "--disable-pip-version-check",
                        "--keyring-provider", "import", "--index-url", url, "--target", target, project],
                       capture_output=True, text=True, env=env, timeout=300)
    return r, target


def test_pip_gets_the_password_from_the_store(index):
    url, netloc, project, work = index
    assert PASSWORD not in url
    # Without the credential in the store: the index refuses pip.
    r, _ = pip_install(url, project, work)
    assert r.returncode != 0, r.stdout
    assert "401" in r.stdout + r.stderr or "No matching distribution" in r.stdout + r.stderr
    # The credential, through the tool's standard input only.
    add = subprocess.run([find_tool(), "add", "--class", "generic", "--service", netloc, "--account", USER],
                         input=PASSWORD.encode(), capture_output=True, timeout=60)
    assert add.returncode == 0, add.stderr
    try:
        r, target = pip_install(url, project, work)
        assert r.returncode == 0, r.stdout + r.stderr
        assert os.path.exists(os.path.join(target, project + ".py"))
        assert PASSWORD not in r.stdout + r.stderr
    finally:
        subprocess.run([find_tool(), "delete", "--class", "generic", "--service", netloc], capture_output=True, timeout=60)
