#!/usr/bin/env bash
# Side-by-side timings of the engine against the tools it should be near: the process-spawn
# floor (`anvil-bench --version`: one rail, and the mean over every rail of a whole scripted
# case), `sha256sum`, `rg -F` and `grep -rF`. Each pair runs
# alternately RUNS times (default 11) and the table shows medians and their ratio.
#
#   bash benches/side_by_side.sh            # from the repository root
#   RUNS=21 bash benches/side_by_side.sh
#   BENCH_DIR=/var/tmp bash benches/side_by_side.sh
#
# BENCH_DIR (default $TMPDIR, else /tmp) holds the bench's repository and runs and the
# latency-bound batteries' scratch; the default-battery row runs as the README's command
# does, in the caller's environment. On an ext4 without a journal, a directory whose inode
# groups saw many files deleted in the last minutes makes every file creation slow (0.5 ms
# against 0.03 ms), so a bench after a large cleanup belongs in another directory tree.
#
# Installs ripgrep from apt when it is missing and apt is usable; otherwise its row says so.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-11}

cargo build --release --quiet
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/anvil-bench
# ripgrep for the find_text rows; bubblewrap for the latency-bound battery (a command agent
# runs sandboxed).
for pair in rg:ripgrep bwrap:bubblewrap; do
  if ! command -v "${pair%%:*}" >/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
      apt-get install -y -qq "${pair#*:}" >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null && apt-get install -y -qq "${pair#*:}" >/dev/null; }
    fi
  fi
done

BENCH_DIR=${BENCH_DIR:-${TMPDIR:-/tmp}}
WORK=$(mktemp -d "$BENCH_DIR/anvil-side-by-side.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp -r examples/payments "$WORK/w"
W=$WORK/w
# 16 MiB of text to cite, and 2,000 files of 50 KB (100 MB) to search.
python3 -c 'import sys; line = "The capture window is measured in seconds of wall-clock time, see capture_timeout.\n"; sys.stdout.write((line * ((16 << 20) // len(line) + 1))[: 16 << 20])' > "$W/repo/docs/big.md"
mkdir -p "$W/repo/src/gen"
line='def handler(request): return request.capture_timeout * 1000  # window and padding text'
python3 - "$W/repo/src/gen" "$line" <<'PY'
import sys, os
d, line = sys.argv[1], sys.argv[2] + "\n"
body = line * (50_000 // len(line) + 1)
for i in range(2000):
    open(os.path.join(d, f"m{i:05}.py"), "w").write(body)
PY

open_run() {
  "$BIN" case open --air "$W/air.json" --repo "$W/repo" --skill annotate-unit \
    --target op.create_payment.input.body.capture_timeout --cases-dir "$WORK/cases-$1" \
    --tool-limit selectedFiles=100000 --tool-limit selectedBytes=1000000000 \
    --tool-limit fileBytes=67108864 --json \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["runDir"])'
}

# Times come from bash's own clock, $EPOCHREALTIME: reading it spawns nothing. (Taking
# the time with `date` put one `date` process inside every interval, 1-3 ms added to both
# sides of a pair, which made the rail's ratio to `--version` look nearer 1 than it is.)
# time_ms CMD... : wall microseconds of one run, output discarded (median prints ms).
time_ms() {
  local a b
  a=${EPOCHREALTIME/[^0-9]/}
  "$@" >/dev/null 2>&1 || true
  b=${EPOCHREALTIME/[^0-9]/}
  echo $((b - a))
}
median() { sort -n | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "%.1f", m/1000}'; }

declare -a ROWS
row() { ROWS+=("| $1 | $2 ms | $3: $4 ms | $(awk -v a="$2" -v b="$4" 'BEGIN{printf "%.2f×", a/b}') | $5 |"); }

# The setup wrote ~120 MB: let writeback finish, or the rails' fsyncs queue behind it.
sync

# 1. One rail against the spawn floor.
RUN=$(open_run rail)
ours=(); ref=()
for i in $(seq "$RUNS"); do
  ours+=("$(time_ms "$BIN" case add-evidence "$RUN" --path src/payments/service.py --start-line 32 --end-line 39)")
  ref+=("$(time_ms "$BIN" --version)")
done
row "one CLI rail (add-evidence, journaled)" "$(printf '%s\n' "${ours[@]}" | median)" "\`--version\`" "$(printf '%s\n' "${ref[@]}" | median)" "≤ 1.5×"

# 1b. Every rail of one scripted case through the CLI (open, two excerpts, a claim, freeze,
#     validate, finalize, close: 8 calls) on a copy of the bundled example, per call.
cp -r examples/payments "$WORK/p"
P=$WORK/p
whole_case() {
  local run e1 e2 claim
  # Without --json, open prints the run directory alone: nothing else is spawned in the
  # timed case.
  run=$("$BIN" case open --air "$P/air.json" --repo "$P/repo" --skill annotate-unit \
    --target op.create_payment.input.body.capture_timeout --cases-dir "$WORK/cases-whole") \
    || return 1
  e1=$("$BIN" case add-evidence "$run" --path src/payments/service.py --start-line 32 \
    --end-line 39) || return 1
  e2=$("$BIN" case add-evidence "$run" --path tests/test_capture.py --start-line 6 \
    --end-line 8) || return 1
  claim=$("$BIN" case add-claim "$run" --predicate field.unit --value '"s"' --artifact "$e1" \
    --artifact "$e2" --confidence 0.9) || return 1
  "$BIN" case freeze-research "$run" >/dev/null || return 1
  # The agent's proposal, written by bash's own printf: a `cat` here put a process that
  # is not the engine's into the row's time (1.4 ms a case here, 0.17 ms of each call's mean).
  printf '%s\n' \
    '{"format": "anvil-proposal", "formatVersion": 1, "skill": "annotate-unit", "skillVersion": 1,' \
    ' "deficiency": "unit_ambiguous_field", "target": "op.create_payment.input.body.capture_timeout",' \
    ' "patch": {"target": "op.create_payment.input.body.capture_timeout", "set": {"unit": "s"}},' \
    " \"grounding\": {\"unit\": [\"$claim\"]}, \"confidence\": 0.9," \
    ' "rationale": "timedelta(seconds=...) converts the wire value"}' \
    > "$run/output/proposal.json"
  "$BIN" case validate "$run" >/dev/null || return 1
  "$BIN" case finalize "$run" >/dev/null || return 1
  "$BIN" case close "$run" >/dev/null
}
whole_case || { echo "the scripted case failed: its row would time a refusal" >&2; exit 1; }
ours=(); ref=()
for i in $(seq "$RUNS"); do
  ours+=("$(( $(time_ms whole_case) / 8 ))")
  ref+=("$(time_ms "$BIN" --version)")
done
row "one CLI rail, the mean over a whole scripted case (8 calls)" "$(printf '%s\n' "${ours[@]}" | median)" "\`--version\`" "$(printf '%s\n' "${ref[@]}" | median)" "≤ 1.5×"

# 2. add-evidence of 16 MiB against sha256sum of it (a fresh run each time: nothing cached).
#    Its fsync writes the 16 MiB to disk; `sync` first (untimed), so that it does not also
#    write back what the bench itself wrote before (the 100 MB tree, the earlier runs).
ours=(); ref=()
for i in $(seq "$RUNS"); do
  RUN=$(open_run "big$i")
  sync
  ours+=("$(time_ms "$BIN" case add-evidence "$RUN" --path docs/big.md)")
  ref+=("$(time_ms sha256sum "$W/repo/docs/big.md")")
done
row "add-evidence, 16 MiB file" "$(printf '%s\n' "${ours[@]}" | median)" "\`sha256sum\`" "$(printf '%s\n' "${ref[@]}" | median)" "≤ 1.1×"

# 3. find_text over 2,000 files / 100 MB (and the 16 MiB document: everything in scope)
#    against rg -F and grep -rF over the same repository.
RUN=$(open_run find)
RID=$(basename "$RUN")
cat > "$WORK/req.json" <<JSON
{"format": "anvil-investigation-request", "formatVersion": 1, "runId": "$RID",
 "requests": [{"requestId": "a", "operation": "source.find_text",
   "arguments": {"text": "capture_timeout", "caseSensitive": true, "offset": 0, "limit": 10}}]}
JSON
ours=(); ref=(); ref2=()
for i in $(seq "$RUNS"); do
  ours+=("$(time_ms "$BIN" case query "$RUN" --request "$WORK/req.json" --json)")
  if command -v rg >/dev/null; then ref+=("$(time_ms rg -nF capture_timeout "$W/repo")"); fi
  ref2+=("$(time_ms grep -rnF capture_timeout "$W/repo")")
done
q=$(printf '%s\n' "${ours[@]}" | median)
if [ ${#ref[@]} -gt 0 ]; then
  row "source.find_text, 2,000 files / 100 MB" "$q" "\`rg -nF\`" "$(printf '%s\n' "${ref[@]}" | median)" "≤ 2×"
else
  ROWS+=("| source.find_text, 2,000 files / 100 MB | $q ms | \`rg\` not installed (apt-get install ripgrep) | — | ≤ 2× |")
fi
row "source.find_text, 2,000 files / 100 MB" "$q" "\`grep -rnF\`" "$(printf '%s\n' "${ref2[@]}" | median)" "—"
rss=$( { /usr/bin/time -f '%M' "$BIN" case query "$RUN" --request "$WORK/req.json" --json >/dev/null; } 2>&1 | tail -1 || true)
ROWS+=("| source.find_text peak RSS | $((rss / 1024)) MiB | — | — | ≤ 32 MiB |")

# 4. The README's main command.
ours=()
for i in 1 2 3; do ours+=("$(time_ms "$BIN" battery --out "$WORK/battery-$i")"); done
ROWS+=("| default battery (45 scenarios, 4 arms + oracle) | $(printf '%s\n' "${ours[@]}" | median) ms | — | — | ≤ 5 s |")

# 5. A latency-bound agent: a command driver that thinks 200 ms per turn (no model, no
#    network) for TURNS turns — by default 11, the heuristic investigator's median number of
#    actions per trial in the default battery. Harness overhead is a trial's wall time
#    beyond the agent's own: the same command run alone, outside the harness (it takes more
#    than TURNS × 200 ms, since each turn spawns a `sleep`); and the throughput of --jobs 8
#    against --jobs 1, same 16 trials.
TURNS=${TURNS:-11}
AGENT=(sh -c "for i in \$(seq $TURNS); do sleep 0.2; done")
lat() { TMPDIR=$BENCH_DIR "$BIN" battery --investigator command --no-controls --limit 16 --jobs "$1" --out "$2" --command "${AGENT[@]}" 2>>"$WORK/lat.err"; }
# The agent alone runs five times just before the --jobs 1 battery and five times just
# after it, so that a host whose speed drifts during the battery moves both sides alike.
alone=()
for i in 1 2 3 4 5; do alone+=("$(time_ms "${AGENT[@]}")"); done
j1=$(time_ms lat 1 "$WORK/lat-1")
if [ -d "$WORK/lat-1/trials" ]; then
  for i in 1 2 3 4 5; do alone+=("$(time_ms "${AGENT[@]}")"); done
  j8=$(time_ms lat 8 "$WORK/lat-8")
  agent=$(printf '%s\n' "${alone[@]}" | median)
  # The overhead (the trials' median wall beyond the agent alone) on the first line, and on
  # the second where it went: each phase's median over the trials (their records keep
  # them), the investigation split into the agent's process and the driver's work around
  # it, and the process beyond the agent alone (the sandbox's start, its init, the runner).
  { read -r over; read -r BREAKDOWN; } < <(python3 - "$WORK/lat-1/trials" "$agent" <<'PY'
import json, os, statistics, sys
d, agent = sys.argv[1], float(sys.argv[2])
ts = [json.load(open(os.path.join(d, f))) for f in os.listdir(d) if "--command--" in f]
print(f"{statistics.median(t['wallMs'] for t in ts) - agent:.0f}")
ps = [t["phases"] for t in ts]
med = lambda xs: statistics.median(xs) / 1000
parts = [
    ("prepare", med([p["prepareUs"] for p in ps])),
    ("open", med([p["openUs"] for p in ps])),
    ("driver around the agent", med([p["investigateUs"] - p["agentProcessUs"] for p in ps])),
    ("agent process beyond the agent alone", med([p["agentProcessUs"] for p in ps]) - agent),
    ("end", med([p["endUs"] for p in ps])),
    ("scan", med([p["scanUs"] for p in ps])),
    ("score", med([p["scoreUs"] for p in ps])),
    ("keep", med([p["keepUs"] for p in ps])),
]
print("harness overhead by phase (medians over the trials, ms): " + " · ".join(f"{k} {v:.1f}" for k, v in parts))
PY
)
  ROWS+=("| latency-bound trial ($TURNS turns × 200 ms), harness overhead | ${over} ms | the agent alone: ${agent} ms | $(awk -v a="$over" -v b="$agent" 'BEGIN{printf "%.1f%%", 100*a/b}') | ≤ 2% |")
  ROWS+=("| 16 latency-bound trials, \`--jobs 8\` vs \`--jobs 1\` | $(awk -v a="$j8" 'BEGIN{printf "%.1f", a/1000}') ms | \`--jobs 1\`: $(awk -v a="$j1" 'BEGIN{printf "%.1f", a/1000}') ms | $(awk -v a="$j1" -v b="$j8" 'BEGIN{printf "%.1f× throughput", a/b}') | ≥ 6× |")
else
  echo "the latency-bound battery did not run, so its two rows are left out:" >&2
  tail -n 3 "$WORK/lat.err" >&2
fi

echo "| what | ours (median of $RUNS) | reference (median) | ratio | target |"
echo "|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
if [ -n "${BREAKDOWN:-}" ]; then
  echo
  echo "$BREAKDOWN"
fi
