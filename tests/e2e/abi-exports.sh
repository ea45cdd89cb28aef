#!/bin/sh
# The closed ABI (docs/design.md): libgolden.so exports exactly the functions and objects that the
# public headers declare with GOLDEN_API, and no private function of the library carries the
# public golden_ prefix. Declarations come from the compiler (-aux-info), not from a regex.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
so="$GOLDEN_BUILD/lib/libgolden.so.0"
lib="$GOLDEN_BUILD/lib/libgolden.a"
inc="$GOLDEN_ROOT/libgolden/include"

for h in "$inc"/golden/*.h; do echo "#include \"golden/$(basename "$h")\""; done > all.c
if ! ${CC:-cc} -std=c11 -D_GNU_SOURCE -I"$inc" $(pkg-config --cflags hdf5 jansson) \
        -aux-info aux.txt -fsyntax-only all.c 2> cc.err; then
    notok abi-headers-compile "$(head -c 400 cc.err)"; exit 0
fi
ok abi-headers-compile

# Every public header compiles on its own (one header per concept, each self-contained).
bad=""
for h in "$inc"/golden/*.h; do
    echo "#include \"golden/$(basename "$h")\"" > one.c
    ${CC:-cc} -std=c11 -Wall -Wextra -Werror -I"$inc" $(pkg-config --cflags hdf5 jansson) \
        -fsyntax-only one.c 2>> one.err || bad="$bad $(basename "$h")"
done
if [ -z "$bad" ]; then ok abi-headers-standalone; else notok abi-headers-standalone "$bad: $(head -c 300 one.err)"; fi
# Functions declared in a public header (aux-info names the header of each declaration) ...
grep "/\\* $inc/golden/\|/\\* [^ ]*include/golden/" aux.txt |
    sed -E 's|^/\*[^*]*\*/ *||; s/^([^(]*[ *])?([A-Za-z_][A-Za-z_0-9]*) \(.*/\2/' | sort -u > declared.txt
# ... and objects declared with GOLDEN_API extern.
grep -h 'GOLDEN_API extern' "$inc"/golden/*.h |
    sed -E 's/\[.*//; s/.*[ *]([A-Za-z_][A-Za-z_0-9]*)$/\1/' >> declared.txt
sort -u -o declared.txt declared.txt
n=$(wc -l < declared.txt | tr -d ' ')
if [ "$n" -gt 100 ]; then ok abi-declared-found; else notok abi-declared-found "only $n declarations"; fi

# (sanitizer builds add their own __odr_asan.* and __asan_* symbols: not the library's API)
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ && $3 !~ /^__/ {print $3}' | sed 's/@.*//' | sort -u > exported.txt
comm -13 declared.txt exported.txt > extra.txt
comm -23 declared.txt exported.txt > missing.txt
if [ -s extra.txt ]; then
    notok abi-no-private-exports "$(wc -l < extra.txt) exported but not public: $(head -n 8 extra.txt | tr '\n' ' ')"
else ok abi-no-private-exports; fi
if [ -s missing.txt ]; then
    notok abi-public-exported "$(wc -l < missing.txt) public but not exported: $(head -n 8 missing.txt | tr '\n' ' ')"
else ok abi-public-exported; fi

# Private functions get private names: every global golden_* symbol the library defines is public.
nm --defined-only "$lib" 2>/dev/null | awk '$2 ~ /^[TDBR]$/ && $3 ~ /^golden_/ {print $3}' | sort -u > prefixed.txt
comm -23 prefixed.txt declared.txt > misnamed.txt
if [ -s misnamed.txt ]; then
    notok abi-private-names "$(wc -l < misnamed.txt) private functions named golden_*: $(head -n 8 misnamed.txt | tr '\n' ' ')"
else ok abi-private-names; fi
