"""Signed tokens between navsync and PyJWT (with `cryptography`).

Usage: pyjwt_test.py BIN_DIR

- Tokens PyJWT mints, HS256 and EdDSA, with the keys `navsync keygen` made,
  are accepted by navsyncd with the claims they carry; one with the wrong
  algorithm for its key, or past its exp, is refused.
- Tokens `navsync token` mints decode in PyJWT (signature, exp, aud checked
  by PyJWT) with exactly the claims asked for.
Every wait is bounded; the daemon is stopped by its PID.
"""
import base64
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402
from line_client import LineClient  # noqa: E402
from navsyncd import start_daemon, stop_daemon  # noqa: E402

BIN = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="navsync-interop-")
check = Checks()


def navsync(*arguments):
    return subprocess.run([os.path.join(BIN, "navsync")] + list(arguments), capture_output=True, text=True, timeout=20)


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def key_line(path):
    with open(path) as f:
        return [line.split() for line in f if line.strip() and not line.startswith("#")][0]


def main():
    ed_file, hs_file = os.path.join(WORK, "ed"), os.path.join(WORK, "hs")
    ed_public = navsync("keygen", "--kid", "pair", ed_file).stdout
    hs_line = navsync("keygen", "--kid", "shared", "--alg", "hs256", hs_file).stdout
    keys = os.path.join(WORK, "keys")
    with open(keys, "w") as f:
        f.write(ed_public + hs_line)
    os.chmod(keys, 0o600)
    _, _, seed = key_line(ed_file)
    _, _, secret = key_line(hs_file)
    private = Ed25519PrivateKey.from_private_bytes(unb64(seed))
    check("navsync keygen's public key is the seed's",
          private.public_key().public_bytes_raw() == unb64(ed_public.split()[2]))
    proc, port = start_daemon(BIN, os.path.join(WORK, "daemon.log"),
                              ["--listen", "127.0.0.1:0", "--token-keys", keys, "--token-audience", "hall-screens",
                               "--state", "none"])
    try:
        now = int(time.time())
        claims = {"role": "view", "rooms": ["hall", "lobby"], "name": "wall-7", "exp": now + 600, "aud": "hall-screens",
                  "iat": now, "jti": "abc", "sub": "screen-7"}
        hs_token = jwt.encode(claims, unb64(secret), algorithm="HS256", headers={"kid": "shared"})
        client = LineClient.connect(port)
        check("PyJWT HS256 accepted", client.request("AUTH " + hs_token) == "OK 0")
        check("its claims are the grant", client.request("WHOAMI").split(" ")[2:] == ["wall-7", "view", "hall,lobby", str(now + 600)])
        ed_token = jwt.encode(dict(claims, role="control", rooms="*", name="desk", aud=["other", "hall-screens"]),
                              private, algorithm="EdDSA", headers={"kid": "pair"})
        client = LineClient.connect(port)
        check("PyJWT EdDSA accepted", client.request("AUTH " + ed_token) == "OK 0")
        check("a control grant steers", client.request("SELECT green") == "OK 1")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyJWT finds 32 bytes short for HS384: that is the point here
            wrong_alg = jwt.encode(claims, unb64(secret), algorithm="HS384", headers={"kid": "shared"})
        check("HS384 refused", LineClient.connect(port).request("AUTH " + wrong_alg) == "ERR auth-failed wrong token")
        expired = jwt.encode(dict(claims, exp=now - 60), private, algorithm="EdDSA", headers={"kid": "pair"})
        check("an expired PyJWT token refused as expired", LineClient.connect(port).request("AUTH " + expired) == "ERR auth-failed token expired")
        no_aud = jwt.encode({k: v for k, v in claims.items() if k != "aud"}, private, algorithm="EdDSA", headers={"kid": "pair"})
        check("without the audience", LineClient.connect(port).request("AUTH " + no_aud) == "ERR auth-failed wrong audience")
    finally:
        stop_daemon(proc)

    for path, key, algorithm in [(ed_file, private.public_key(), "EdDSA"), (hs_file, unb64(secret), "HS256")]:
        minted = navsync("token", "--signing-key", path, "--role", "control", "--rooms", "team-a,team-b", "--name", "ada",
                         "--ttl", "45m", "--audience", "hall-screens")
        check("navsync token (%s)" % algorithm, minted.returncode == 0)
        token = minted.stdout.strip()
        header = jwt.get_unverified_header(token)
        check("%s header: alg, kid, typ" % algorithm, header == {"alg": algorithm, "kid": key_line(path)[0], "typ": "JWT"})
        decoded = jwt.decode(token, key, algorithms=[algorithm], audience="hall-screens",
                             options={"require": ["exp", "iat", "jti"]})
        check("%s decodes in PyJWT with the claims asked for" % algorithm,
              decoded["role"] == "control" and sorted(decoded["rooms"]) == ["team-a", "team-b"] and decoded["name"] == "ada"
              and decoded["aud"] == "hall-screens" and decoded["exp"] - decoded["iat"] == 2700
              and abs(decoded["iat"] - time.time()) < 60 and len(decoded["jti"]) >= 16)
    star = navsync("token", "--signing-key", hs_file, "--role", "view", "--rooms", "*").stdout.strip()
    decoded = jwt.decode(star, unb64(secret), algorithms=["HS256"])
    check("rooms * and the default 8h", decoded["rooms"] == "*" and decoded["exp"] - decoded["iat"] == 8 * 3600
          and "aud" not in decoded and "name" not in decoded)
    print("interop (PyJWT %s): %d checks passed" % (jwt.__version__, check.passed))


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        print("interop: files and daemon log kept in " + WORK, file=sys.stderr)
        raise
    shutil.rmtree(WORK, ignore_errors=True)
