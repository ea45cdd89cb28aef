# make install: tools, headers, static and shared library, libgolden.pc, man pages, schemas;
# then a program built only from the installed files (pkg-config) writes and reads a golden file.
. "$GOLDEN_ROOT/tests/e2e/lib.sh"
prefix=$PWD/prefix
if make -s -C "$GOLDEN_ROOT" BUILD="$GOLDEN_BUILD" SAN="${GOLDEN_SAN:-}" install PREFIX="$prefix" > make.log 2>&1; then
    ok "make install"
else
    notok "make install" "$(tail -5 make.log)"
fi
for f in lib/libgolden.a lib/libgolden.so.0 lib/libgolden.so include/golden/store.h \
         include/golden/error.h lib/pkgconfig/libgolden.pc; do
    if [ -e "$prefix/$f" ]; then ok "installed $f"; else notok "installed $f"; fi
done
for t in "$GOLDEN_BIN"/*; do
    [ -x "$t" ] || continue
    n=$(basename "$t")
    if [ -x "$prefix/bin/$n" ]; then ok "installed bin/$n"; else notok "installed bin/$n"; fi
done
cat > consumer.c <<'C'
#include <golden/store.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    golden_writer *w; golden_reader *r; golden_error e;
    golden_writer_opts o = GOLDEN_WRITER_OPTS_INIT;
    o.producer = "consumer";
    golden_tensor_info t = {0};
    const float x[3] = {1, 2, 3};
    t.name = "v"; t.dtype = GOLDEN_F32; t.rank = 1; t.shape[0] = 3;
    if (golden_writer_open("c.h5", &o, &w, &e) || golden_writer_begin(w, &t, &e) ||
        golden_writer_write(w, x, sizeof x, &e) || golden_writer_end(w, NULL, &e) ||
        golden_writer_commit(w, &e) || golden_reader_open("c.h5", &r, &e)) {
        golden_error_print(stderr, "consumer", &e);
        return 2;
    }
    printf("%s %g\n", golden_reader_tensor(r, 0)->sha256, golden_reader_tensor(r, 0)->mean);
    golden_reader_close(r);
    return 0;
}
C
san=""
[ "${GOLDEN_SAN:-}" = 1 ] && san="-fsanitize=address,undefined"
if PKG_CONFIG_PATH="$prefix/lib/pkgconfig" cc $san -std=c11 consumer.c -o consumer \
       $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs libgolden) \
       $(pkg-config --cflags --libs hdf5 jansson libcrypto yaml-0.1) -lm -pthread 2> cc.log; then
    ok "consumer builds with pkg-config libgolden"
else
    notok "consumer builds with pkg-config libgolden" "$(head -5 cc.log)"
fi
# sha256 of the little-endian f32 bytes of 1, 2, 3, worked out with sha256sum
want=$(printf '\000\000\200\077\000\000\000\100\000\000\100\100' | sha256sum | cut -d' ' -f1)
LD_LIBRARY_PATH="$prefix/lib" ./consumer > consumer.out 2>&1
expect_grep "installed library writes and reads" "^$want 2\$" consumer.out
