/* Fuzz target: the tokenizer. The input is a tokenizer.json, then optionally a line "\n@@\n"
 * and a text; the file is loaded (hostile files must come back as errors), the text encoded and
 * decoded, and without a normalizer or prefix space the round trip must be exact. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "golden/tokenizer.h"
#include "tok/tok_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *sep = NULL;
    for (size_t i = 0; i + 4 <= size; i++)
        if (memcmp(data + i, "\n@@\n", 4) == 0) {
            sep = data + i;
            break;
        }
    size_t jlen = sep ? (size_t)(sep - data) : size;
    const char *path = fuzz_write_file(data, jlen, "json");
    if (!path)
        return 0;
    golden_tokenizer *t = NULL;
    golden_error err = {0};
    if (golden_tokenizer_load(path, NULL, &t, &err) != 0)
        return 0;
    const char *text = sep ? (const char *)sep + 4 : "hello world <|im_end|> 123";
    size_t tlen = sep ? size - jlen - 4 : strlen(text);
    int32_t *ids = NULL;
    size_t n = 0;
    if (golden_tokenizer_encode(t, text, tlen, &ids, &n, &err) == 0) {
        char *back = NULL;
        size_t blen = 0;
        if (golden_tokenizer_decode(t, ids, n, &back, &blen, &err) != 0)
            abort(); /* every id encode gives must decode */
        /* NFC or a prefix space may change the text; otherwise it must come back */
        int exact = !t->nfc;
        for (int k = 0; k < t->nsteps; k++)
            exact &= !t->steps[k].prefix_space;
        if (exact && (blen != tlen || memcmp(back, text, tlen) != 0))
            abort();
        free(back);
    }
    free(ids);
    golden_tokenizer_free(t);
    return 0;
}
