/* Fuzz target: golden-diff's tolerance policy (calculet-diff-policy/v1, JSON or YAML by the
 * first byte) and the resolution of a few tensor names under it. */
#include "fuzz.h"

#include "golden/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *path = fuzz_write_file(data + 1, size - 1, (data[0] & 1) ? "yaml" : "json");
    if (!path)
        return 0;
    golden_policy *p = golden_policy_new();
    if (!p)
        return 0;
    golden_error err = {0};
    if (golden_policy_load(p, path, &err) == 0) {
        json_t *j = golden_policy_to_json(p);
        json_decref(j);
    }
    golden_policy_free(p);
    return 0;
}
