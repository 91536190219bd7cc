#!/bin/sh
# The onceorder program allocates with tcmalloc (CMakeLists.txt, ONCEORDER_TCMALLOC): at run
# time the dynamic loader binds the program's operator new and libstdc++'s malloc to
# libtcmalloc_minimal, not to glibc. A link that dropped the library, or put it after libc,
# would bind them to libc.so.6 and fail here.
# Usage: allocator_test.sh PATH/TO/onceorder
set -eu
bindings=$(LD_BIND_NOW=1 LD_DEBUG=bindings "$1" --help 2>&1 >/dev/null)
for spec in "$(basename "$1") _Znwm" "libstdc++ malloc"; do
  from=${spec% *} symbol=${spec#* }
  line=$(printf '%s\n' "$bindings" | grep "binding file [^ ]*$from[^ ]* \[0\] to .*: normal symbol \`$symbol'" | head -1)
  case $line in
  *libtcmalloc_minimal*) echo "ok: $from's $symbol -> tcmalloc" ;;
  *) echo "FAIL: $from's $symbol is not bound to tcmalloc: ${line:-no binding seen}"; exit 1 ;;
  esac
done
