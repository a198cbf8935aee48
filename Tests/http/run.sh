#!/usr/bin/env bash
# The HTTP API against its OpenAPI document. Usage: Tests/http/run.sh BIN_DIR
# Makes a virtual environment under .build/ with openapi-spec-validator and
# openapi-core from PyPI (python3-venv from Debian when missing), checks
# docs/openapi.yaml with the validator, then runs api_test.py, which starts
# the built navsyncd (and a redis-server of its own) on port 0 and checks
# every answer against that document, under a bound of four minutes.
set -euo pipefail
bin="$(cd "${1:-.build/release}" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
missing=""
for p in python3-venv redis-server openssl; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "http: installing$missing"
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi
venv="$root/.build/http-venv"
if ! "$venv/bin/python" -c 'import openapi_core, openapi_spec_validator, yaml, jsonschema' 2>/dev/null; then
    echo "http: making $venv with openapi-core and openapi-spec-validator"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "openapi-core>=0.19" openapi-spec-validator pyyaml
fi
"$venv/bin/openapi-spec-validator" "$root/docs/openapi.yaml"
timeout -k 5 240 "$venv/bin/python" "$here/api_test.py" "$bin" "$root/docs/openapi.yaml"
