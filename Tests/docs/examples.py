#!/usr/bin/env python3
"""Runs every shell example of the docs that starts navsyncd or navsync.

Usage: examples.py BIN_DIR [ROOT]

The examples are the shell blocks of README.md and docs/*.md (indented or
fenced), the EXAMPLES sections of the man pages and the NAVSYNCD_OPTS /
NAVSYNCD_FLEET_OPTS examples of the /etc/default files. A block is run when
one of its commands starts `navsyncd` or `navsync`; it fails the test when
any command in it exits non-zero (bash -e, pipefail), so an example that
rots (a flag renamed, a listener beyond loopback without tokens, a file
the example forgot to make) fails `make test`.

Each document runs top to bottom, as a reader would follow it, in a scratch
directory and in namespaces of its own (unshare: user, network, mount, pid):
the network has only loopback (plus 10.0.0.5 on it, and `nav.example` in
/etc/hosts), so `--listen 0.0.0.0:7878`, port 443 and the documented ports
are the test's own and nothing is reachable from outside; when the runner
ends, the pid namespace ends every process it started. Inside a block:

- `navsyncd ...` starts the daemon in the background (a trailing `&` is
  implied), waits for its `listening on` line, and fails the block if it
  exits instead. Starting one stops the daemons of earlier blocks, so a
  document can reuse its ports; a block of clients alone talks to the
  daemons still running, or to a plain `navsyncd --state none` on
  127.0.0.1:7878 when there are none.
- `navsync COMMAND ...` runs with a bound of 20 s; `watch` must still be
  running after 3 s (it is then stopped, which counts as success); the
  full-screen client (no command) runs in a tmux pane until its status
  line shows `connected` (at most 20 s), and 2 s later must still show it
  and neither `stopped` nor `ERR`.
- Paths under /etc/navsync, /etc/letsencrypt, /run/navsync and
  /var/lib/navsync point into the scratch directory, where a CA, a
  certificate for nav.example/localhost/127.0.0.1/10.0.0.5, a tokens file,
  a catalog and Redis credentials are made for the run. A Redis URL in a
  block gets a redis-server there (with the credentials' password on
  10.0.0.5).

Not run, and listed as skipped: blocks that need the installed system
(`systemctl`, `apt`, `sudo`, `make`), and benchmark command lines
(`navsync-bench`, which the bench smoke test runs). A line with `$ ` prompts
marks its block's commands; the other lines are output.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", ".."))

# The program's name where a command starts, followed by nothing, a flag or (for navsync) one
# of its commands: a results table's "navsync   100   3 ..." row and prose such as "navsync
# vs redis" are no commands.
VERBS = "ui|watch|raw|get|state|if|screens|stats|rooms|who|pop|root|ping|select|push|present|dismiss|next|open|keygen|token|link"
COMMAND = re.compile(r"^(?:\$ )?(?:[A-Z_]+=\S+ )*(?:\.build/\w+/)?(?:(navsyncd)(?:$|\s+(?:$|-))"
                     r"|(navsync)(?:$|\s+(?:$|-|#|(?:%s)(?:\s|$))))" % VERBS)
NEEDS_SYSTEM = re.compile(r"^(?:\$ )?(?:sudo |systemctl |apt |apt-get |make )")
MAPPED = ["/etc/navsync", "/etc/letsencrypt", "/run/navsync", "/var/lib/navsync"]


def markdown_blocks(path):
    """(first line number, lines) of every indented or fenced code block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        line = lines[i]
        fence = re.match(r"^```(\w*)\s*$", line)
        if fence:
            start, body = i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            if fence.group(1) in ("", "sh", "bash", "shell", "console"):
                blocks.append((start + 1, body))
        elif line.startswith("    ") and (i == 0 or lines[i - 1].strip() == ""):
            start, body = i + 1, []
            while i < len(lines) and (lines[i].startswith("    ") or lines[i].strip() == ""):
                body.append(lines[i][4:])
                i += 1
            while body and body[-1].strip() == "":
                body.pop()
            blocks.append((start, body))
            continue
        i += 1
    return blocks


def roff_text(line):
    return (line.replace("\\-", "-").replace("\\e", "\\").replace("\\(aq", "'")
            .replace("\\(dq", '"').replace("\\&", ""))


def man_blocks(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, inside, body, start = [], False, None, 0
    for number, line in enumerate(lines, 1):
        if line.startswith(".SH"):
            inside = line.strip() == ".SH EXAMPLES"
            continue
        if not inside:
            continue
        if line.startswith(".nf"):
            body, start = [], number + 1
        elif line.startswith(".fi") and body is not None:
            blocks.append((start, body))
            body = None
        elif body is not None and not line.startswith("."):
            body.append(roff_text(line))
    return blocks


def default_blocks(path):
    """The commented NAVSYNCD_OPTS="..." examples, each as the unit would run it."""
    blocks = []
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        found = re.match(r'^#\s+(NAVSYNCD_OPTS|NAVSYNCD_FLEET_OPTS)="(.*)"\s*$', line)
        if not found:
            continue
        options = found.group(2)
        if found.group(1) == "NAVSYNCD_OPTS":
            command = "navsyncd --state /var/lib/navsync/state.json " + options
        else:
            command = "navsyncd --listen 127.0.0.1:7001 " + options
        blocks.append((number, [command]))
    return blocks


def logical_lines(body):
    """Joins backslash continuations; keeps only `$ ` lines when the block has prompts."""
    prompted = any(l.startswith("$ ") for l in body)
    out, current = [], None
    for line in body:
        if current is not None:
            current += "\n" + line
        elif prompted and not line.startswith("$ "):
            continue
        else:
            current = line[2:] if prompted else line
        if current.endswith("\\"):
            continue
        out.append(current)
        current = None
    if current is not None:
        out.append(current)
    return out


def classify(body):
    """('run', commands) or ('skip', why) or (None, None) for a block that runs neither program."""
    commands = logical_lines(body)
    runs = [c for c in commands if COMMAND.match(c) and " [--" not in c]
    if not runs:
        return None, None
    if any(NEEDS_SYSTEM.match(c) for c in commands):
        return "skip", "needs the installed system (systemctl, apt, sudo or make)"
    if any("navsync-bench" in c for c in commands):
        return "skip", "a benchmark (bench/smoke.sh runs navsync-bench)"
    return "run", commands


def rewrite(command, scratch):
    command = re.sub(r"(?<![\w/])\.build/\w+/(navsyncd?)\b", r"\1", command)
    for path in MAPPED:
        command = command.replace(path, scratch + "/root" + path)
    if COMMAND.match(command) and COMMAND.match(command).group(1) == "navsyncd":
        command = re.sub(r"\s*&\s*$", "", command)
    return command


PRELUDE = r'''
set -eo pipefail
trap 'echo "FAILED: $BASH_COMMAND (exit $?)" >&2' ERR
real_navsyncd="$BIN/navsyncd"
real_navsync="$BIN/navsync"

alive() { [ -e "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

stop_earlier_daemons() {
    local file pid
    for file in "$SCRATCH"/daemons.*; do
        [ -e "$file" ] || continue
        [ "$file" = "$SCRATCH/daemons.$BLOCK" ] && continue
        for pid in $(cat "$file"); do
            kill -TERM "$pid" 2>/dev/null || true
            # Up to 20 s (5 s was short on a loaded machine, and the next
            # daemon then found the document's port still taken); then KILL.
            for _ in $(seq 1 400); do alive "$pid" || break; sleep 0.05; done
            if alive "$pid"; then
                kill -KILL "$pid" 2>/dev/null || true
                for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.05; done
            fi
        done
        rm -f "$file"
    done
}

navsyncd() {
    case " $* " in *" --help "*|*" --version "*) command "$real_navsyncd" "$@"; return;; esac
    stop_earlier_daemons
    local log; log=$(mktemp "$SCRATCH/logs/navsyncd.XXXXXX")
    command "$real_navsyncd" "$@" >/dev/null 2>"$log" &
    local pid=$!
    echo "$pid" >> "$SCRATCH/daemons.$BLOCK"
    for _ in $(seq 1 400); do
        if grep -q "listening on" "$log"; then
            echo "  navsyncd $*: $(grep -o 'listening on [^ ]*' "$log" | tr '\n' ' ')"
            return 0
        fi
        if ! alive "$pid"; then
            local status=0; wait "$pid" || status=$?
            echo "  navsyncd $* exited with status $status:" >&2; sed 's/^/    /' "$log" >&2
            return "$status"
        fi
        sleep 0.05
    done
    echo "  navsyncd $* did not say 'listening on' within 20 s:" >&2; sed 's/^/    /' "$log" >&2
    return 1
}

navsync() {
    local verb="" skip=0 arg status=0
    for arg in "$@"; do
        if [ $skip = 1 ]; then skip=0; continue; fi
        case $arg in
            --connect|--unix|--room|--token-file|--tls-ca|--count|--timeout|--name) skip=1 ;;
            -*) ;;
            *) verb=$arg; break ;;
        esac
    done
    case $verb in
        "")
            local session="docs-$$-$RANDOM" screen
            tmux -L "$session" -f /dev/null new-session -d -x 80 -y 24 \
                "env TERM=screen LANG=C.UTF-8 $(printf '%q ' "$real_navsync" "$@"); echo '[navsync exited]'; sleep 60"
            # Until the status line says connected (or the client gave up),
            # at most 20 s: a fixed 3 s was not always enough for tmux and
            # the client to start on a loaded machine. Then 2 s more in
            # which no error or stop may appear.
            for _ in $(seq 1 200); do
                screen=$(tmux -L "$session" capture-pane -p)
                if printf '%s\n' "$screen" | tail -3 | grep -q "connected" \
                    || printf '%s\n' "$screen" | grep -Eq "navsync stopped|navsync exited|ERR "; then
                    break
                fi
                sleep 0.1
            done
            sleep 2
            screen=$(tmux -L "$session" capture-pane -p)
            tmux -L "$session" kill-server 2>/dev/null || true
            printf '%s\n' "$screen" | sed '/^$/d' | tail -2 | sed 's/^/  | /'
            if ! printf '%s\n' "$screen" | tail -3 | grep -q "connected" \
                || printf '%s\n' "$screen" | grep -Eq "navsync stopped|navsync exited|ERR "; then
                echo "  the full-screen client 'navsync $*' did not come up connected:" >&2
                printf '%s\n' "$screen" | sed 's/^/    /' >&2
                return 1
            fi ;;
        watch)
            timeout -k 2 3 "$real_navsync" "$@" || status=$?
            if [ "$status" = 124 ]; then status=0; fi
            return "$status" ;;
        *)
            timeout -k 2 20 "$real_navsync" "$@" || status=$?
            return "$status" ;;
    esac
}
'''

DRIVER_HEAD = r'''
set -u -o pipefail
ip link set lo up
ip addr add 10.0.0.5/32 dev lo
cp /etc/hosts "$SCRATCH/hosts"
printf '127.0.0.1 nav.example\n' >> "$SCRATCH/hosts"
mount --bind "$SCRATCH/hosts" /etc/hosts
redis_at() {  # HOST PORT [PASSWORD]
    local key="$1:$2"
    grep -qx "$key" "$SCRATCH/redis.list" 2>/dev/null && return 0
    local extra=()
    [ -n "${3:-}" ] && extra=(--requirepass "$3")
    redis-server --bind "$1" --port "$2" --save '' --appendonly no --daemonize no \
        --dir "$SCRATCH" --dbfilename "redis-$2.rdb" "${extra[@]}" >"$SCRATCH/logs/redis-$1-$2.log" 2>&1 &
    for _ in $(seq 1 400); do
        redis-cli -h "$1" -p "$2" ${3:+-a "$3"} --no-auth-warning PING 2>/dev/null | grep -q PONG && break
        sleep 0.05
    done
    echo "$key" >> "$SCRATCH/redis.list"
}
default_daemon() {
    local file pid
    for file in "$SCRATCH"/daemons.*; do
        [ -e "$file" ] || continue
        for pid in $(cat "$file"); do
            [ -e "/proc/$pid" ] && return 0
        done
    done
    BLOCK=0 bash -c "source '$SCRATCH/prelude.sh'; navsyncd --state none"
}
failed=0
run_block() {  # NAME FILE
    echo "-- $1"
    # Output to a file, not a pipe: a process the block leaves running (a
    # Redis started with &) would hold a pipe open for ever.
    local status=0
    (cd "$SCRATCH/work" && timeout -k 5 90 env BLOCK="$3" bash -c "source '$SCRATCH/prelude.sh'; source '$2'" \
        </dev/null >"$2.out" 2>&1) || status=$?
    sed 's/^/   /' "$2.out"
    if [ $status != 0 ]; then
        echo "FAIL $1 (status $status)"
        failed=1
    else
        echo "ok   $1"
    fi
}
'''


def fixtures(scratch):
    """A CA and a certificate, a tokens file, a catalog and Redis credentials where the docs point."""
    etc = os.path.join(scratch, "root/etc/navsync")
    live = os.path.join(scratch, "root/etc/letsencrypt/live/nav.example")
    for d in [etc, live, os.path.join(scratch, "root/run/navsync"), os.path.join(scratch, "root/var/lib/navsync"),
              os.path.join(scratch, "work"), os.path.join(scratch, "logs"), os.path.join(scratch, "home"),
              os.path.join(scratch, "state")]:
        os.makedirs(d, exist_ok=True)

    def openssl(*args):
        subprocess.run(["openssl"] + list(args), cwd=etc, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=docs test CA",
            "-keyout", "ca.key", "-out", "ca.pem")
    with open(os.path.join(etc, "san.ext"), "w") as f:
        f.write("subjectAltName = DNS:nav.example, DNS:localhost, IP:127.0.0.1, IP:10.0.0.5\n"
                "extendedKeyUsage = serverAuth\n")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=nav.example", "-keyout", "key.pem", "-out", "cert.csr")
    openssl("x509", "-req", "-in", "cert.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
            "-extfile", "san.ext", "-out", "cert.pem")
    shutil.copy(os.path.join(etc, "cert.pem"), os.path.join(live, "fullchain.pem"))
    shutil.copy(os.path.join(etc, "key.pem"), os.path.join(live, "privkey.pem"))
    for name in ["cert.pem", "key.pem", "ca.pem"]:
        shutil.copy(os.path.join(etc, name), os.path.join(scratch, "work", name))
    with open(os.path.join(etc, "tokens"), "w") as f:
        f.write("control * docs-control-token-0000000001 ada\nview * docs-view-token-00000000001 wall\n")
    with open(os.path.join(etc, "token"), "w") as f:
        f.write("docs-shared-token-000000000001\n")
    with open(os.path.join(etc, "redis-auth"), "w") as f:
        f.write("docs-redis-password\n")
    shutil.copy(os.path.join(ROOT, "Clients/netcat/abc-screens.json"), os.path.join(etc, "screens.json"))
    for name in ["tokens", "token", "redis-auth", "key.pem", "ca.key"]:
        os.chmod(os.path.join(etc, name), 0o600)
    os.chmod(os.path.join(live, "privkey.pem"), 0o600)


def main():
    sources = [("README.md", markdown_blocks)]
    sources += [(os.path.relpath(p, ROOT), markdown_blocks) for p in sorted(glob.glob(os.path.join(ROOT, "docs/*.md")))]
    sources += [(os.path.relpath(p, ROOT), man_blocks) for p in sorted(glob.glob(os.path.join(ROOT, "packaging/man/*.in")))]
    sources += [("packaging/deb/default-navsyncd", default_blocks), ("packaging/deb/default-navsyncd-fleet", default_blocks)]

    if subprocess.run(["unshare", "--user", "--map-root-user", "--net", "true"],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        print("FAIL docs examples: unshare (user and network namespaces) is not allowed here; "
              "the examples listen on fixed ports and 0.0.0.0, which only a private network makes safe")
        return 1

    failed, ran, skipped = False, 0, 0
    top = tempfile.mkdtemp(prefix="navsync-docs-")
    try:
        for name, extract in sources:
            plan = []
            for line, body in extract(os.path.join(ROOT, name)):
                kind, what = classify(body)
                if kind == "skip":
                    print("skip %s:%d: %s" % (name, line, what))
                    skipped += 1
                elif kind == "run":
                    plan.append((line, what))
            if not plan:
                continue
            scratch = os.path.join(top, re.sub(r"\W", "_", name))
            fixtures(scratch)
            with open(os.path.join(scratch, "prelude.sh"), "w") as f:
                f.write("BIN=%s\nSCRATCH=%s\n" % (shlex.quote(BIN), shlex.quote(scratch)))
                f.write('export PATH="$BIN:$PATH" HOME="$SCRATCH/home" XDG_STATE_HOME="$SCRATCH/state" '
                        'USER=docs LANG=C.UTF-8\nunset NAVSYNC_ADDR NAVSYNC_TLS_CA\n')
                f.write(PRELUDE)
            driver = ["SCRATCH=%s" % shlex.quote(scratch), DRIVER_HEAD]
            for index, (line, commands) in enumerate(plan, 1):
                text = "\n".join(rewrite(c, scratch) for c in commands) + "\n"
                block_file = os.path.join(scratch, "block-%d.sh" % index)
                with open(block_file, "w") as f:
                    f.write(text)
                # A block that starts its own Redis (BACKPLANE.md) gets none from the runner.
                for host, port in ([] if "redis-server" in text else re.findall(r"redis://([\d.]+):(\d+)", text)):
                    password = "docs-redis-password" if "--backplane-auth" in text else ""
                    driver.append("redis_at %s %s %s" % (host, port, shlex.quote(password)))
                if not any(COMMAND.match(c) and COMMAND.match(c).group(1) == "navsyncd" for c in commands):
                    driver.append("default_daemon >/dev/null")
                driver.append("run_block %s %s %d" % (shlex.quote("%s:%d" % (name, line)), shlex.quote(block_file), index))
            driver.append("exit $failed")
            with open(os.path.join(scratch, "driver.sh"), "w") as f:
                f.write("\n".join(driver) + "\n")
            print("== %s: %d example block(s)" % (name, len(plan)))
            sys.stdout.flush()
            result = subprocess.run(["unshare", "--user", "--map-root-user", "--net", "--mount", "--pid", "--fork",
                                     "--mount-proc", "bash", os.path.join(scratch, "driver.sh")],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
            sys.stdout.write(result.stdout)
            ran += len(plan)
            if result.returncode != 0:
                failed = True
    finally:
        shutil.rmtree(top, ignore_errors=True)
    print("docs examples: %d block(s) run, %d skipped%s" % (ran, skipped, ", FAILED" if failed else ", all passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
