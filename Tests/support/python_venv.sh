# Sourced by the run.sh of the Python suites (browser, http, interop):
# the Debian packages they need and a virtual environment of their own
# under .build/, each made only when missing.

# needs_debian PACKAGE...: installs those not installed yet (sudo unless root).
needs_debian() {
    local missing="" p sudo=""
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    [ -n "$missing" ] || return 0
    echo "$suite: installing$missing"
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
}

# python_venv NAME IMPORTS PIP_REQUIREMENT...: the virtual environment
# .build/NAME, made with those requirements from PyPI unless its python
# already imports IMPORTS (comma-separated modules); sets $venv.
python_venv() {
    local name="$1" imports="$2"
    shift 2
    venv="$root/.build/$name"
    if ! "$venv/bin/python" -c "import $imports" 2>/dev/null; then
        echo "$suite: making $venv with $*"
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q "$@"
    fi
}
