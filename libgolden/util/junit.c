/* JUnit XML as the Jenkins xunit plugin's junit-10.xsd accepts it: testsuites carries name,
 * time, tests, failures, errors; testsuite adds timestamp and hostname; one testcase per check. */
#include "golden/report.h"

#include "util/utf8.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

char *golden_xml_escape(const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    char *out = malloc(n * 6 + 1), *o = out;
    if (!out)
        return NULL;
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        size_t seq = *p >= 0x80 ? lg_utf8_seq(p, (size_t)(end - p)) : 0;
        if (seq) {
            memcpy(o, p, seq);
            o += seq;
            p += seq;
            continue;
        }
        switch (*p) {
        case '<': o = stpcpy(o, "&lt;"); break;
        case '>': o = stpcpy(o, "&gt;"); break;
        case '&': o = stpcpy(o, "&amp;"); break;
        case '"': o = stpcpy(o, "&quot;"); break;
        case '\'': o = stpcpy(o, "&apos;"); break;
        default:
            if (*p >= 0x80)
                o = stpcpy(o, "\xEF\xBF\xBD"); /* invalid UTF-8: U+FFFD keeps the XML well-formed */
            else if (*p >= 0x20 || *p == '\t' || *p == '\n' || *p == '\r')
                *o++ = (char)*p;
            /* other control characters are not allowed in XML 1.0: dropped */
        }
        p++;
    }
    *o = '\0';
    return out;
}

static void iso_time(time_t t, char *buf, size_t n)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm); /* xs:dateTime without a zone, as Ant writes */
}

static int write_case(FILE *o, const golden_junit_case *c, const char *suite_name)
{
    char *cls = golden_xml_escape(c->classname ? c->classname : suite_name);
    char *name = golden_xml_escape(c->name);
    char *msg = golden_xml_escape(c->message ? c->message : (c->failed ? "failed" : NULL));
    char *det = golden_xml_escape(c->details ? c->details : c->message);
    int bad = !cls || !name || !msg || !det;
    if (!bad) {
        /* time is optional in junit-10.xsd: a case nobody timed (a rule checked in the same
         * pass as all the others) carries none rather than a made-up 0 */
        fprintf(o, "    <testcase classname=\"%s\" name=\"%s\"", cls, name);
        if (c->seconds > 0)
            fprintf(o, " time=\"%.6f\"", c->seconds);
        if (c->failed)
            fprintf(o, ">\n      <failure message=\"%s\" type=\"failure\">%s</failure>\n"
                       "    </testcase>\n", msg, det);
        else if (c->skipped)
            fprintf(o, ">\n      <skipped message=\"%s\"/>\n    </testcase>\n", msg);
        else
            fprintf(o, "/>\n");
    }
    free(cls);
    free(name);
    free(msg);
    free(det);
    return bad ? -1 : 0;
}

int golden_junit_write_suite(const char *path, bool force, const golden_junit_suite *suite,
                             const golden_junit_case *cases, size_t n, golden_error *err)
{
    golden_outfile *f;
    if (golden_outfile_open(path, force, &f, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    FILE *o = golden_outfile_stream(f);
    size_t failures = 0, skipped = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        failures += cases[i].failed;
        skipped += !cases[i].failed && cases[i].skipped;
        sum += cases[i].seconds > 0 ? cases[i].seconds : 0;
    }
    double total = suite->seconds > sum ? suite->seconds : sum;
    time_t started = suite->started ? suite->started : time(NULL) - (time_t)total;
    char stamp[32], host[256] = "localhost";
    iso_time(started, stamp, sizeof stamp);
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    char *name = golden_xml_escape(suite->name), *hostx = golden_xml_escape(host);
    int bad = !name || !hostx;
    if (!bad)
        fprintf(o,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<testsuites name=\"%s\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
                "time=\"%.6f\">\n"
                "  <testsuite name=\"%s\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
                "skipped=\"%zu\" time=\"%.6f\" timestamp=\"%s\" hostname=\"%s\">\n",
                name, n, failures, total, name, n, failures, skipped, total, stamp, hostx);
    for (size_t i = 0; i < n && !bad; i++)
        bad = write_case(o, &cases[i], suite->name) != 0;
    if (!bad)
        fprintf(o, "  </testsuite>\n</testsuites>\n");
    free(name);
    free(hostx);
    if (bad) {
        golden_outfile_abort(f);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    return golden_outfile_commit(f, err);
}

int golden_junit_write(const char *path, bool force, const char *suite_name,
                       const golden_junit_case *cases, size_t n, golden_error *err)
{
    golden_junit_suite s = {.version = GOLDEN_JUNIT_SUITE_VERSION, .name = suite_name};
    golden_run_clock(&s.seconds, &s.started);
    return golden_junit_write_suite(path, force, &s, cases, n, err);
}

int golden_junit_write_suites(const char *path, bool force, const char *name,
                              const golden_junit_suites_part *parts, size_t nparts,
                              golden_error *err)
{
    golden_outfile *f;
    if (golden_outfile_open(path, force, &f, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    FILE *o = golden_outfile_stream(f);
    double run_seconds = 0;
    time_t run_started = 0;
    golden_run_clock(&run_seconds, &run_started);
    size_t tests = 0, failures = 0;
    double suites_sum = 0;
    for (size_t k = 0; k < nparts; k++) {
        suites_sum += parts[k].seconds > 0 ? parts[k].seconds : 0;
        for (size_t i = 0; i < parts[k].n; i++) {
            tests++;
            failures += parts[k].cases[i].failed;
        }
    }
    if (suites_sum > run_seconds)
        run_seconds = suites_sum;
    char stamp[32], host[256] = "localhost";
    iso_time(run_started ? run_started : time(NULL), stamp, sizeof stamp);
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    char *namex = golden_xml_escape(name), *hostx = golden_xml_escape(host);
    int bad = !namex || !hostx;
    if (!bad)
        fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<testsuites name=\"%s\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
                   "time=\"%.6f\">\n", namex, tests, failures, run_seconds);
    for (size_t k = 0; k < nparts && !bad; k++) {
        size_t fl = 0, sk = 0;
        double t = parts[k].seconds > 0 ? parts[k].seconds : 0, sum = 0;
        for (size_t i = 0; i < parts[k].n; i++) {
            fl += parts[k].cases[i].failed;
            sk += !parts[k].cases[i].failed && parts[k].cases[i].skipped;
            sum += parts[k].cases[i].seconds > 0 ? parts[k].cases[i].seconds : 0;
        }
        t = t > sum ? t : sum;
        char *sx = golden_xml_escape(parts[k].name);
        bad = !sx;
        if (!bad)
            fprintf(o, "  <testsuite name=\"%s\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
                       "skipped=\"%zu\" time=\"%.6f\" timestamp=\"%s\" hostname=\"%s\">\n",
                    sx, parts[k].n, fl, sk, t, stamp, hostx);
        for (size_t i = 0; i < parts[k].n && !bad; i++)
            bad = write_case(o, &parts[k].cases[i], parts[k].name) != 0;
        if (!bad)
            fprintf(o, "  </testsuite>\n");
        free(sx);
    }
    if (!bad)
        fprintf(o, "</testsuites>\n");
    free(namex);
    free(hostx);
    if (bad) {
        golden_outfile_abort(f);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    return golden_outfile_commit(f, err);
}
