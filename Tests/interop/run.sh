#!/usr/bin/env bash
# Signed tokens against a JWT library the project does not write: PyJWT with
# `cryptography`, from PyPI, in a virtual environment under .build/.
# Usage: Tests/interop/run.sh BIN_DIR
set -euo pipefail
bin="${1:-.build/release}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
fi
venv="$root/.build/interop-venv"
if ! "$venv/bin/python" -c 'import jwt, cryptography' 2>/dev/null; then
    echo "interop: making $venv with PyJWT and cryptography"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'pyjwt[crypto]'
fi
timeout -k 5 120 "$venv/bin/python" "$here/pyjwt_test.py" "$bin"
