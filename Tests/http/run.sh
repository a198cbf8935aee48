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
suite=http
. "$root/Tests/support/python_venv.sh"
needs_debian python3-venv redis-server openssl
python_venv http-venv "openapi_core, openapi_spec_validator, yaml, jsonschema" "openapi-core>=0.19" openapi-spec-validator pyyaml
"$venv/bin/openapi-spec-validator" "$root/docs/openapi.yaml"
timeout -k 5 240 "$venv/bin/python" "$here/api_test.py" "$bin" "$root/docs/openapi.yaml"
