/* npu-replay matrix: the input matrix of handbook section 5 (lengths x content sets), each
 * case's token ids in a file referenced with its hash; rejection cases never submitted. */
#include "golden/replay_run.h"

int golden_replay_matrix(const golden_replay_matrix_opts *o, golden_replay_matrix_result *res,
                         golden_error *err)
{
    (void)o;
    (void)res;
    return golden_fail_what(err, GOLDEN_EUNSUPPORTED, "matrix", "not built yet");
}
