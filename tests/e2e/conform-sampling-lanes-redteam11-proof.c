/* Red team 11: proof that a shim mode really breaks `sample` (conform-sampling-lanes-redteam11.sh).
 * proof SHIM.so MODEL_DIR MODE: opens the plug-in with rt_mode=MODE, prefills lane 0 and lane 1
 * with different prompts (lane 1 last), then draws greedily on lane 0 and compares with the
 * largest logit of lane 0's own row (the ABI: "from the lane's last processed position's
 * logits"). Prints "same" or "differs"; exit 0 when it ran. */
#include "golden/backend.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) return fprintf(stderr, "%s\n", dlerror()), 2;
    golden_backend_entry_v2_fn e;
    *(void **)&e = dlsym(h, GOLDEN_BACKEND_ENTRY_V2);
    const golden_backend_vtable_v2 *t = e ? e() : NULL;
    if (!t || !GOLDEN_BACKEND_V2_HAS(t, sample)) return fprintf(stderr, "no v2 table\n"), 2;
    const char *keys[] = {"rt_mode"}, *vals[] = {argv[3]};
    golden_backend_open_args a = {2, argv[2], 1, keys, vals, 1};
    char msg[256];
    void *self = NULL;
    if (t->base.open(&a, &self, msg, sizeof msg)) return fprintf(stderr, "%s\n", msg), 2;
    golden_backend_info info;
    if (t->base.info(self, &info, msg, sizeof msg) || info.logits_dtype != GOLDEN_BK_F32)
        return fprintf(stderr, "info\n"), 2;
    int32_t p0[12], p1[12];
    for (int i = 0; i < 12; i++) p0[i] = 5 + 7 * i, p1[i] = 300 - 11 * i;
    if (t->base.prefill(self, 0, 0, p0, 12, msg, sizeof msg) ||
        t->base.prefill(self, 1, 0, p1, 12, msg, sizeof msg))
        return fprintf(stderr, "%s\n", msg), 2;
    float *row = malloc(sizeof(float) * (size_t)info.vocab_size);
    if (!row || t->base.logits(self, 0, 0, info.vocab_size, row, msg, sizeof msg)) return 2;
    int best = 0;
    for (int i = 1; i < info.vocab_size; i++)
        if (row[i] > row[best]) best = i;
    golden_backend_sampling s;
    memset(&s, 0, sizeof s);
    s.temp = 0;
    s.top_p = 1;
    s.repeat_penalty = 1;
    s.history = p0;
    s.n_history = 12;
    s.seed = 1;
    int32_t tok = -1;
    if (t->sample(self, 0, &s, &tok, msg, sizeof msg)) return fprintf(stderr, "%s\n", msg), 2;
    printf("%s (lane 0's argmax %d, sample gave %d)\n", tok == best ? "same" : "differs", best, tok);
    t->base.close(self);
    free(row);
    return 0;
}
