# Shared by the example scripts: sourced, not run. Needs only curl and node.
set -euo pipefail

API="${LOCALPLANE_URL:-http://127.0.0.1:9400}"
# The seeded Acme Analytics workspace (plus tier) and its API key: public test values, see GET /_localplane/fixtures.
WORKSPACE_ID=6e81f035-1834-4208-8f34-e3a9482cde15
AUTH=(-H 'X-API-Key: lp_test_acme_plus_0001' -H "X-Tenant-Id: $WORKSPACE_ID")

# api METHOD PATH [JSON]: the response body on stdout; an HTTP error status prints the body and fails.
api() {
  curl --fail-with-body -sS -X "$1" "${AUTH[@]}" -H 'Content-Type: application/json' "$API$2" ${3+--data "$3"}
}

# admin METHOD PATH [JSON]: the same for the harness knobs under /_localplane (no auth).
admin() {
  curl --fail-with-body -sS -X "$1" -H 'Content-Type: application/json' "$API/_localplane$2" ${3+--data "$3"}
}

# expect_status CODE METHOD PATH [JSON]: for steps that expect an error; prints the body, fails on another status.
expect_status() {
  local expected=$1 body code
  shift
  body=$(curl -sS -w '\n%{http_code}' -X "$1" "${AUTH[@]}" -H 'Content-Type: application/json' "$API$2" ${3+--data "$3"})
  code=${body##*$'\n'}
  echo "${body%$'\n'*}"
  if [ "$code" != "$expected" ]; then
    echo "FAILED: $1 $2 answered $code, expected $expected" >&2
    exit 1
  fi
  echo "ok: $1 $2 -> $code"
}

# json EXPRESSION: evaluates a JavaScript expression of `it` (the JSON on stdin); strings print bare.
json() {
  node -e '
    let text = "";
    process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => {
      const value = new Function("it", `return (${process.argv[1]});`)(JSON.parse(text));
      console.log(typeof value === "string" ? value : JSON.stringify(value));
    });' "$1"
}

# check DESCRIPTION EXPRESSION: fails the script unless the expression of `it` (the JSON on stdin) is true.
check() {
  local verdict
  verdict=$(json "$2")
  if [ "$verdict" != true ]; then
    echo "FAILED: $1 ($2)" >&2
    exit 1
  fi
  echo "ok: $1"
}

# step TITLE: a heading in the output.
step() { printf '\n== %s\n' "$1"; }

# The emulator clock as the script found it is put back when the script ends.
CLOCK_WAS_FROZEN=$(admin GET /clock | json 'it.frozen')
restore_clock() { [ "$CLOCK_WAS_FROZEN" = true ] || admin POST /clock/unfreeze > /dev/null; }
trap restore_clock EXIT
