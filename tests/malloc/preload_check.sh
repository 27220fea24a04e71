#!/bin/sh
# tests/malloc/preload_check.sh LIB — runs real programs under
# LD_PRELOAD=LIB (libnumaware_malloc.so) and checks their results:
#   python3  threads building and dropping dicts/lists/strings, checksum checked,
#            plus os.fork and subprocess from a threaded process;
#   git      init, commits, log, gc in a temporary repository;
#   sqlite3  10,000 rows inserted and a checked aggregate query.
# Each program first proves the library is mapped in its own process
# (/proc/self/maps), so a run that silently fell back to glibc fails.
set -eu
LIB=${1:?usage: preload_check.sh /path/to/libnumaware_malloc.so}
case $LIB in /*) ;; *) LIB=$(pwd)/$LIB ;; esac
[ -f "$LIB" ] || { echo "no such library: $LIB" >&2; exit 1; }
NAME=$(basename "$LIB")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The library must load and serve a plain program.
LD_PRELOAD=$LIB grep -q "$NAME" /proc/self/maps || fail "$NAME is not mapped under LD_PRELOAD"

# ---- python3: multi-threaded allocation-heavy workload, fork, subprocess ----
cat > "$WORK/work.py" <<'PY'
import os, sys, threading, subprocess, hashlib

lib = sys.argv[1]
with open("/proc/self/maps") as f:
    assert lib in f.read(), "library not mapped in python"

def work(seed, out):
    h = hashlib.sha256()
    for r in range(300):
        d = {f"k{seed}-{i}": [str(i * r)] * (i % 7) for i in range(200)}
        l = [("x" * (i % 300)) + str(i) for i in range(300)]
        s = sum(len(v) for v in d.values()) + sum(len(x) for x in l)
        h.update(str(s).encode())
        del d, l
    out[seed] = h.hexdigest()

def expected(seed):
    h = hashlib.sha256()
    for r in range(300):
        s = sum(i % 7 for i in range(200)) + sum((i % 300) + len(str(i)) for i in range(300))
        h.update(str(s).encode())
    return h.hexdigest()

out = {}
threads = [threading.Thread(target=work, args=(t, out)) for t in range(8)]
for t in threads: t.start()
# Fork while the threads allocate: the child must be able to allocate.
pid = os.fork()
if pid == 0:
    x = [bytes(1000) * 10 for _ in range(2000)]
    ok = sum(len(b) for b in x) == 2000 * 10000
    with open("/proc/self/maps") as f:
        ok = ok and lib in f.read()
    os._exit(0 if ok else 7)
_, status = os.waitpid(pid, 0)
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"forked child failed: {status}"
for t in threads: t.join()
for seed in range(8):
    assert out[seed] == expected(seed), f"checksum mismatch in thread {seed}"
r = subprocess.run([sys.executable, "-c", "import sys; print(sum(range(10**6)))"],
                   capture_output=True, text=True, check=True)
assert r.stdout.strip() == str(sum(range(10**6)))
print("python ok")
PY
LD_PRELOAD=$LIB python3 "$WORK/work.py" "$NAME" | grep -qx "python ok" || fail python3

# ---- git: a repository with commits, log and gc ----
R=$WORK/repo
mkdir "$R"
(
    # set -e does not apply inside a subshell tested with ||: every step checks.
    cd "$R" || exit 1
    export LD_PRELOAD=$LIB GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org \
           GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
    git init -q . || exit 1
    grep -q "$NAME" /proc/self/maps || exit 1
    i=0
    while [ $i -lt 20 ]; do
        seq 1 $((i * 200)) > "file$i.txt" || exit 1
        git add "file$i.txt" || exit 1
        git commit -q -m "commit $i" || exit 1
        i=$((i + 1))
    done
    [ "$(git log --oneline | wc -l)" -eq 20 ] || exit 1
    git gc -q || exit 1
    git fsck --no-progress --strict || exit 1
    [ "$(git show HEAD:file19.txt | wc -l)" -eq 3800 ] || exit 1
) || fail git

# ---- sqlite3: 10,000 rows and a checked aggregate ----
command -v sqlite3 >/dev/null || fail "sqlite3 is not installed"
OUT=$(LD_PRELOAD=$LIB sqlite3 "$WORK/t.db" <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER, s TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 10000)
INSERT INTO t(v, s) SELECT i * 3, printf('row-%08d', i) FROM c;
CREATE INDEX ts ON t(s);
SELECT count(*), sum(v), max(s) FROM t;
SQL
) || fail sqlite3
[ "$OUT" = "10000|150015000|row-00010000" ] || fail "sqlite3 result: $OUT"

echo "preload check ok: python3 (threads, fork, subprocess), git, sqlite3 under $NAME"
