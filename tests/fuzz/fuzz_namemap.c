/* Fuzz target: tensor name maps (globs and regexes compiled to one matcher), loaded from a
 * JSON or YAML policy file and applied to a few names. */
#include "fuzz.h"

#include <stdlib.h>

#include "golden/namemap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *path = fuzz_write_file(data + 1, size - 1, (data[0] & 1) ? "yaml" : "json");
    if (!path)
        return 0;
    golden_namemap *m = golden_namemap_new();
    if (!m)
        return 0;
    golden_error err = {0};
    if (golden_namemap_load(m, path, &err) == 0) {
        static const char *const names[] = {"model.layers.0.mlp.out", "layers/1/attn/out",
                                            "logits", "", "a/b/c/d/e/f/g"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            free(golden_namemap_apply(m, names[i], &err));
    }
    golden_namemap_free(m);
    return 0;
}
