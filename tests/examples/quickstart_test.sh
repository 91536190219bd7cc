#!/usr/bin/env bash
# docs/QUICKSTART.md, run as written so that the page cannot drift from the server: every
# ```sh block of the page, in order, in one bash (errexit, nounset, pipefail) in an empty
# directory, with the built onceorder first on the PATH and a free port in PORT. A block in
# any other language than sh, text or json fails the test (a command there would not run),
# and so does a page with no blocks. Afterwards `onceorder check` must find the tour's
# database clean. The server the page starts is stopped by the page; if a step fails first,
# the trap stops it.
# Usage: quickstart_test.sh SOURCE_DIR ONCEORDER_BIN WORK_DIR
set -euo pipefail
src=$1 bin=$2 work=$3
page="$src/docs/QUICKSTART.md"
rm -rf "$work"
mkdir -p "$work"

if bad=$(grep -nE '^```[A-Za-z]' "$page" | grep -vE '^[0-9]+:```(sh|text|json)$'); then
  echo "QUICKSTART.md has a block the test would not run: $bad"
  exit 1
fi
awk '/^```sh$/ {on = 1; n++; printf "echo \"+ block %d (line %d)\"\n", n, NR; next}
     on && /^```$/ {on = 0; next}
     on {print}' "$page" >"$work/tour.sh"
blocks=$(grep -c '^```sh$' "$page")
((blocks >= 8)) || { echo "QUICKSTART.md has only $blocks sh blocks"; exit 1; }

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cd "$work"
export PATH="$(cd "$(dirname "$bin")" && pwd):$PATH" PORT="$port"
# The page's own shell: the server it starts in the background is this bash's child.
bash -euo pipefail -c 'trap "kill \${SERVER_PID:-} 2>/dev/null || true" EXIT; source ./tour.sh' \
  || { echo "QUICKSTART.md failed; the server's log:"; cat serve.log 2>/dev/null || true; exit 1; }
"$bin" check --db sqlite:tour.db
echo "quickstart: $blocks blocks ran"
