/* Private to report/: the page buffer behind golden_html and the small helpers the charts and
 * the reports share. */
#ifndef GOLDEN_REPORT_HTML_INT_H
#define GOLDEN_REPORT_HTML_INT_H
#include <stdbool.h>
#include <stddef.h>

#include "golden/html.h"

struct golden_html {
    char *buf;
    size_t len, cap;
    bool oom; /* sticky: golden_html_write reports it */
};

void html_put_n(golden_html *h, const char *s, size_t n);

/* A number from a JSON member: NAN when absent, null or not a number. */
double html_num(const json_t *obj, const char *key);
/* A string member, or "" . */
const char *html_str(const json_t *obj, const char *key);

#endif
