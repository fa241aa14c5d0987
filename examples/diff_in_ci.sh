#!/usr/bin/env bash
# Diff two recorded server versions the way a CI job does: record release 1 and release 2
# of the example server with the same client session, then `mcptape diff` them as a
# pull-request comment (markdown) and as JSON for a gate. Exit 1 means behaviour changed.
# A complete GitHub Actions job is in examples/ci/mcp-server-diff.yml.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
out=${1:-$(mktemp -d)}
for v in v1 v2; do
    flag=$([ "$v" = v2 ] && echo --v2 || true)
    "$PY" examples/demo_client.py -- "$PY" -m mcptape record -q -o "$out/$v.jsonl" -- "$PY" examples/demo_server.py $flag >/dev/null 2>&1
done
"$PY" -m mcptape diff "$out/v1.jsonl" "$out/v2.jsonl" --format markdown > "$out/comment.md"
status=$?
cat "$out/comment.md"
"$PY" -m mcptape diff "$out/v1.jsonl" "$out/v2.jsonl" --format json > "$out/diff.json"
echo "breaking changes: $("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["counts"]["breaking"])' "$out/diff.json")"
exit $status
