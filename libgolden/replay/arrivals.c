/* The open loop's arrival schedule (`run --qps R --arrivals poisson --seed S`, MLPerf LoadGen's
 * server scenario): request r of a case arrives at the sum of r + 1 exponential inter-arrival
 * times of mean 1/R seconds, drawn from a splitmix64 stream whose state starts at
 * S ^ fnv1a64(case id), so a case's schedule depends on the seed and its id only (not on which
 * other cases are selected). u = (z >> 11) * 2^-53 in [0, 1), the gap -ln(1 - u) / R; the
 * offsets are the running sum in doubles, rounded to nanoseconds. docs/npu-replay.md has the
 * same recipe for a second implementation. */
#include <math.h>
#include <stdint.h>

#include "replay/run_priv.h"

static uint64_t fnv1a64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

void replay_arrivals(uint64_t seed, const char *case_id, double qps, size_t n, uint64_t *off_ns)
{
    uint64_t st = seed ^ fnv1a64(case_id);
    double t = 0;
    for (size_t r = 0; r < n; r++) {
        uint64_t z = (st += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        double u = (double)(z >> 11) * (1.0 / 9007199254740992.0);
        t += -log(1.0 - u) / qps;
        off_ns[r] = (uint64_t)llround(t * 1e9);
    }
}
