/* Fuzz target: experiment folders (manifest-verify's rules over hypothesis, manifests, logs,
 * results, SHA256SUMS) and vendor hand-off folders (handoff.json and the eight items), unpacked
 * from a text container: a folder with handoff.json is a hand-off, else each subfolder is an
 * experiment. */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "golden/experiment.h"

static void check_experiment(const char *dir)
{
    golden_experiment_opts o = {.version = GOLDEN_EXPERIMENT_OPTS_VERSION, .threads = 1};
    golden_findings f;
    golden_findings_init(&f);
    golden_error err = {0};
    (void)golden_experiment_check(dir, &o, &f, &err);
    golden_findings_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *root = fuzz_unpack_folder(data, size);
    if (!root)
        return 0;
    char path[600];
    snprintf(path, sizeof path, "%s/handoff.json", root);
    struct stat st;
    if (stat(path, &st) == 0) {
        golden_experiment_opts o = {.version = GOLDEN_EXPERIMENT_OPTS_VERSION, .threads = 1};
        golden_handoff_item items[GOLDEN_HANDOFF_ITEMS];
        golden_findings f;
        golden_findings_init(&f);
        golden_error err = {0};
        (void)golden_handoff_check(root, &o, items, &f, &err);
        golden_findings_free(&f);
        return 0;
    }
    DIR *d = opendir(root);
    if (!d)
        return 0;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) && n < 2) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", root, e->d_name);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            check_experiment(path);
            n++;
        }
    }
    closedir(d);
    return 0;
}
