#!/usr/bin/env bash
# The receiver examples of docs/RECEIVING.md, so that they cannot rot: the C++ one
# (docs/examples/receiver.cpp) compiled standalone with the command the page gives, and the
# Python snippet taken from the page itself, both fed signatures made by OnceOrder's signer
# (sign_body, onceorder/core/signature.hpp): a good one, a changed body, another secret, a stale
# timestamp, a malformed header.
# Usage: receiver_examples_test.sh SOURCE_DIR SIGN_BODY CXX WORK_DIR
set -euo pipefail
src=$1 sign=$2 cxx=$3 work=$4
mkdir -p "$work"
failures=0
expect() {  # expect WHAT WANTED GOT
  if [[ "$3" == "$2" ]]; then
    echo "ok   $1: $3"
  else
    echo "FAIL $1: wanted '$2', got '$3'"
    failures=$((failures + 1))
  fi
}

(cd "$src" && "$cxx" -std=c++20 -Wall -Wextra -Werror -I include docs/examples/receiver.cpp \
  -lcrypto -o "$work/receiver")

# The first ```python block of the page, and a driver: SIGNATURE argument, body on stdin.
awk '/^```python$/ {on = 1; next} on && /^```$/ {exit} on {print}' "$src/docs/RECEIVING.md" \
  >"$work/receiver.py"
grep -q '^def verify' "$work/receiver.py" || { echo "no Python snippet in RECEIVING.md"; exit 1; }
cat >>"$work/receiver.py" <<'PY'


import os
import sys

print(200 if verify(sys.argv[1], sys.stdin.buffer.read(), os.environ["SECRET"].encode()) else 401)
PY

secret='a-secret-of-at-least-16-bytes'
body='{"id":42,"type":"order.placed","key":"o-1","occurred_at":"2024-05-29T16:26:40.123Z","data":{"order_id":"o-1","note":"café \u00e9 \"x\""}}'
good=$(printf '%s' "$body" | "$sign" "$secret")
other=$(printf '%s' "$body" | "$sign" "another-secret-of-16-bytes")
stale=$(printf '%s' "$body" | "$sign" "$secret" $(($(date +%s) - 1000)))
changed=${body/\"id\":42/\"id\":43}

cpp() { printf '%s' "$2" | "$work/receiver" "$secret" 42 "$1" | cut -d' ' -f1 | paste -sd' '; }
expect "C++ good signature, twice" "200 200" "$(cpp "$good" "$body")"
expect "C++ second delivery is a duplicate" "200 duplicate, not acted on" \
  "$(printf '%s' "$body" | "$work/receiver" "$secret" 42 "$good" | tail -1)"
expect "C++ changed body" "401 401" "$(cpp "$good" "$changed")"
expect "C++ another secret" "401 401" "$(cpp "$other" "$body")"
expect "C++ stale timestamp" "401 401" "$(cpp "$stale" "$body")"
expect "C++ malformed header" "400 400" "$(cpp "v1=abc" "$body")"

py() { printf '%s' "$2" | SECRET=$secret python3 "$work/receiver.py" "$1"; }
expect "Python good signature" 200 "$(py "$good" "$body")"
expect "Python changed body" 401 "$(py "$good" "$changed")"
expect "Python another secret" 401 "$(py "$other" "$body")"
expect "Python stale timestamp" 401 "$(py "$stale" "$body")"
expect "Python malformed header" 401 "$(py "t=x,v1=abc" "$body")"

((failures == 0)) || { echo "$failures failed"; exit 1; }
echo "receiver examples: all passed"
