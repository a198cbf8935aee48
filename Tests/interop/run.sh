#!/usr/bin/env bash
# Signed tokens against a JWT library the project does not write: PyJWT with
# `cryptography`, from PyPI, in a virtual environment under .build/.
# Usage: Tests/interop/run.sh BIN_DIR
set -euo pipefail
bin="${1:-.build/release}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
suite=interop
. "$root/Tests/support/python_venv.sh"
needs_debian python3-venv
python_venv interop-venv "jwt, cryptography" 'pyjwt[crypto]'
timeout -k 5 120 "$venv/bin/python" "$here/pyjwt_test.py" "$bin"
