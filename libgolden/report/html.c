/* The HTML page writer: a growing buffer, escaping, the one page shell (inline CSS for light,
 * dark and print; inline JS for errors, JSON tables and sorting) and the embedded report JSON. */
#include "golden/html.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "golden/report.h"
#include "report/html_int.h"
#include "util/vec.h"

/* One stylesheet for every report. Colours are variables so dark mode and print only swap them. */
static const char css[] =
    ":root{--bg:#fff;--fg:#1b1b1b;--mute:#666;--grid:#ddd;--bad:#c0392b;--ok:#1e8449;"
    "--s0:#1f77b4;--s1:#d62728;--s2:#2ca02c;--s3:#9467bd;--s4:#ff7f0e;--s5:#8c564b;"
    "--s6:#e377c2;--s7:#17becf;--s8:#bcbd22;--s9:#393b79;--base:#7f7f7f;--cand:#1f77b4;--hl:#fde2e2}\n"
    "@media (prefers-color-scheme:dark){:root{--bg:#16181c;--fg:#e6e6e6;--mute:#9a9a9a;"
    "--grid:#333;--bad:#ff6b5b;--ok:#58d68d;--s0:#6cb4ff;--s1:#ff7b7b;--s2:#7be07b;"
    "--s3:#c9a0ff;--s4:#ffb060;--s5:#d9a38c;--s6:#f7a8dc;--s7:#5fe3f0;--s8:#e0e070;--s9:#9c9ef0;--base:#aaa;--cand:#6cb4ff;--hl:#4a2323}}\n"
    "body{background:var(--bg);color:var(--fg);font:14px/1.4 system-ui,sans-serif;margin:1.5em;"
    "max-width:1100px}\n"
    "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid var(--grid)}\n"
    ".fail,.verdict-fail{color:var(--bad);font-weight:600}.pass,.verdict-pass{color:var(--ok)}\n"
    ".note{color:var(--mute)}\n"
    "table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;border-bottom:1px solid "
    "var(--grid);text-align:left;font-variant-numeric:tabular-nums}\n"
    "th{cursor:pointer;user-select:none}th[data-dir=asc]::after{content:' \\25B2'}"
    "th[data-dir=desc]::after{content:' \\25BC'}\n"
    "tr.hl td{background:var(--hl)}button.more{margin:.3em 0}\n"
    "svg.chart{display:block;margin:.5em 0;max-width:100%;height:auto}\n"
    "svg text{fill:var(--fg);font-size:11px}svg .axis{stroke:var(--fg)}svg .grid{stroke:var(--grid)}\n"
    "svg .series{fill:none;stroke-width:1.8}svg .dashed{stroke-dasharray:5 3}\n"
    ".s0{stroke:var(--s0);fill:var(--s0)}.s1{stroke:var(--s1);fill:var(--s1)}"
    ".s2{stroke:var(--s2);fill:var(--s2)}.s3{stroke:var(--s3);fill:var(--s3)}"
    ".s4{stroke:var(--s4);fill:var(--s4)}.s5{stroke:var(--s5);fill:var(--s5)}"
    ".s6{stroke:var(--s6);fill:var(--s6)}.s7{stroke:var(--s7);fill:var(--s7)}"
    ".s8{stroke:var(--s8);fill:var(--s8)}.s9{stroke:var(--s9);fill:var(--s9)}\n"
    "svg polyline.series{fill:none}svg .mark{stroke:var(--bad);stroke-width:1.5;"
    "stroke-dasharray:4 2}\n"
    "svg .box.base{fill:var(--base);opacity:.5}svg .box.cand{fill:var(--cand);opacity:.5}"
    "svg .tick{stroke:var(--fg);stroke-width:2}svg .whisk{stroke:var(--mute)}\n"
    "svg .bin,svg .col{fill:var(--s0)}svg .lane{fill:none;stroke:var(--grid)}svg .op{fill:var(--bg);"
    "stroke:var(--fg)}svg .op.racing{stroke:var(--bad);stroke-width:2}svg .race{stroke:var(--bad);"
    "stroke-width:2;fill:none}svg .sync{stroke:var(--mute);stroke-width:1.3;fill:none}svg .sync-head{fill:var(--mute)}"
    "svg .op.barrier{fill:var(--mute);stroke:none}svg .op.signal,svg .op.wait{stroke-dasharray:3 2}"
    "svg .chip-band{fill:none;stroke:var(--fg);stroke-opacity:.5}.scroll{overflow-x:auto}svg.wide{max-width:none}svg .opl{font-size:10px}"
    "svg .race-label{paint-order:stroke;stroke:var(--bg);stroke-width:3px;fill:var(--bad)}svg .flip{fill:var(--bad)}svg .flip.near{fill:var(--s4)}\n"
    "@media print{:root{--bg:#fff;--fg:#000;--grid:#bbb}body{margin:0;max-width:none}"
    "th::after{content:none!important}button.more,.json-link,.noprint{display:none}h2{break-after:avoid}svg.chart,table{break-inside:avoid}svg.wide{max-width:100%}}\n";

/* Errors first, so a later script's exception is recorded; the table script last. */
static const char js_errors[] =
    "window.onerror=function(m,s,l){var b=document.body||document.documentElement;"
    "b.setAttribute('data-js-errors',(b.getAttribute('data-js-errors')||'')+m+' @'+l+';');};\n"
    "window.addEventListener('unhandledrejection',function(e){window.onerror(String(e.reason),'',0);});\n"
    /* on paper nothing stays folded */
    "window.addEventListener('beforeprint',function(){document.querySelectorAll('details')"
    ".forEach(function(d){d.open=true;});});\n";

static const char js_tables[] =
    "(function(){\n"
    "var PAGE=500;\n"
    "function txt(v,k){if(v===null&&k==='mismatches_judged')return '-';if(v===null||v===undefined)return '';if(typeof v==='number')"
    "return Math.abs(v)>=1e4||(v!==0&&Math.abs(v)<1e-3)?v.toExponential(3):String(+v.toPrecision(6));"
    "if(Array.isArray(v)&&v.length===2&&(k==='range'||k==='address'))return '['+v[0]+', '+v[1]+')';"
    "if(Array.isArray(v))return v.join(v.length&&typeof v[0]==='number'?'\\u00d7':'; ');return String(v);}\n"
    "function cmp(x,y){if(x===y)return 0;if(x===null||x===undefined)return 1;if(y===null||y===undefined)return -1;"
    "if(typeof x==='number'&&typeof y==='number')return x-y;return String(x).localeCompare(String(y));}\n"
    /* a data table shows PAGE rows (the first after sorting) until "show all" is pressed */
    "function draw(t){var keys=t._keys,tb=t.tBodies[0],f=document.createDocumentFragment();\n"
    " var n=t._all?t._rows.length:Math.min(PAGE,t._rows.length);tb.textContent='';\n"
    " for(var i=0;i<n;i++){var r=t._rows[i],tr=document.createElement('tr');tr.className='row';"
    "keys.forEach(function(k){var td=document.createElement('td'),v=r[k];td.textContent=txt(v,k);"
    "if(typeof v==='number')td.setAttribute('data-v',v);if(k==='verdict')td.className='verdict-'+v;"
    "tr.appendChild(td);});f.appendChild(tr);}\n"
    " tb.appendChild(f);var m=t.nextElementSibling;if(m&&m.className==='more')"
    "m.hidden=t._all||t._rows.length<=PAGE;}\n"
    "function tables(rep){document.querySelectorAll('table[data-rows]').forEach(function(t){\n"
    " var rows=(rep[t.getAttribute('data-rows')]||[]).slice();t._keys=t.getAttribute('data-keys').split(',');\n"
    " if(t.hasAttribute('data-fail-first'))rows=rows.map(function(r,i){return [r,i];})"
    ".sort(function(a,b){return ((b[0].verdict==='fail')-(a[0].verdict==='fail'))||a[1]-b[1];})"
    ".map(function(p){return p[0];});\n"
    " t._rows=rows;t._all=false;var b=document.createElement('button');b.className='more';"
    "b.textContent='show all '+rows.length+' rows';b.onclick=function(){t._all=true;draw(t);};"
    "t.parentNode.insertBefore(b,t.nextSibling);draw(t);});}\n"
    "function sorting(){document.querySelectorAll('table.sortable th').forEach(function(th){th.onclick=function(){\n"
    " var t=th.closest('table'),i=th.cellIndex,d=th.getAttribute('data-dir')==='asc'?'desc':'asc',s=d==='asc'?1:-1;\n"
    " t.querySelectorAll('th').forEach(function(o){o.removeAttribute('data-dir');});th.setAttribute('data-dir',d);\n"
    " if(t._rows){var k=t._keys[i];t._rows.sort(function(a,b){return s*cmp(a[k],b[k]);});draw(t);return;}\n"
    " var rs=Array.prototype.slice.call(t.tBodies[0].rows);rs.sort(function(a,b){\n"
    "  var x=a.cells[i],y=b.cells[i],p=x.getAttribute('data-v'),q=y.getAttribute('data-v');\n"
    "  return s*((p!==null&&q!==null)?(+p)-(+q):x.textContent.localeCompare(y.textContent));});\n"
    " rs.forEach(function(r){t.tBodies[0].appendChild(r);});};});}\n"
    /* the report as a download, so the numbers can be had without a parser */
    /* large heatmaps have no <title> a cell: one line under the map names the cell pointed at */
    "function hovers(){document.querySelectorAll('g.heat').forEach(function(g){\n"
    " var rows=JSON.parse(g.getAttribute('data-rows')),cols=JSON.parse(g.getAttribute('data-cols')),"
    "out=g.parentNode.querySelector('text.hover');\n"
    " g.addEventListener('mouseover',function(e){var t=e.target;if(out&&t.classList.contains('cell'))"
    "out.textContent=rows[+t.getAttribute('data-r')]+' / '+cols[+t.getAttribute('data-c')]+': '+"
    "t.getAttribute('data-v');});});}\n"
    "function start(text){var rep=JSON.parse(text);tables(rep);sorting();hovers();\n"
    " var a=document.getElementById('json-link');if(a){a.href=URL.createObjectURL(new Blob([text],"
    "{type:'application/json'}));}\n"
    " document.body.setAttribute('data-ms',Math.round(performance.now()));"
    "document.body.setAttribute('data-ready','1');}\n"
    "var el=document.getElementById('report-json');\n"
    "if(el&&el.getAttribute('data-encoding')==='deflate-base64'){var s=atob(el.textContent.trim()),"
    "u=new Uint8Array(s.length);for(var i=0;i<s.length;i++)u[i]=s.charCodeAt(i);\n"
    " new Response(new Blob([u]).stream().pipeThrough(new DecompressionStream('deflate'))).text()"
    ".then(start);}\n"
    "else start(el?el.textContent:'{}');\n"
    "})();\n";

void html_put_n(golden_html *h, const char *s, size_t n)
{
    if (!h || h->oom)
        return;
    if (vec_reserve(&h->buf, &h->cap, h->len + n + 1, 1, 65536) != 0) {
        h->oom = true;
        return;
    }
    memcpy(h->buf + h->len, s, n);
    h->len += n;
    h->buf[h->len] = '\0';
}

void golden_html_raw(golden_html *h, const char *markup)
{
    html_put_n(h, markup, strlen(markup));
}

void golden_html_printf(golden_html *h, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        if (h)
            h->oom = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        html_put_n(h, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        if (h)
            h->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    html_put_n(h, big, (size_t)n);
    free(big);
}

void golden_html_text(golden_html *h, const char *text)
{
    if (!text)
        return;
    const char *run = text;
    for (const char *p = text; *p; p++) {
        const char *rep = NULL;
        switch (*p) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default: break;
        }
        if (rep) {
            html_put_n(h, run, (size_t)(p - run));
            golden_html_raw(h, rep);
            run = p + 1;
        }
    }
    html_put_n(h, run, strlen(run));
}

golden_html *golden_html_new(const char *title)
{
    golden_html *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    golden_html_raw(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width\">\n"
                       "<meta name=\"color-scheme\" content=\"light dark\">\n<title>");
    golden_html_text(h, title);
    golden_html_raw(h, "</title>\n<style>\n");
    golden_html_raw(h, css);
    golden_html_raw(h, "</style>\n<script>\n");
    golden_html_raw(h, js_errors);
    golden_html_raw(h, "</script></head>\n<body>\n<h1>");
    golden_html_text(h, title);
    golden_html_raw(h, "</h1>\n");
    if (h->oom) {
        golden_html_free(h);
        return NULL;
    }
    return h;
}

void golden_html_free(golden_html *h)
{
    if (!h)
        return;
    free(h->buf);
    free(h);
}

/* Append s[0..n) with every '<' as \u003c (valid JSON that cannot end the script block). */
static void put_json_text(golden_html *h, const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '<') {
            html_put_n(h, s + run, i - run);
            golden_html_raw(h, "\\u003c");
            run = i + 1;
        }
    html_put_n(h, s + run, n - run);
}

static void put_base64(golden_html *h, const unsigned char *b, size_t n)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char out[4 * 1024 + 8];
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)b[i] << 16 | (i + 1 < n ? (unsigned)b[i + 1] << 8 : 0) |
                     (i + 2 < n ? b[i + 2] : 0);
        out[o++] = al[v >> 18 & 63];
        out[o++] = al[v >> 12 & 63];
        out[o++] = i + 1 < n ? al[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? al[v & 63] : '=';
        if (o >= 4 * 1024) {
            html_put_n(h, out, o);
            o = 0;
        }
    }
    html_put_n(h, out, o);
}

/* Deflate (zlib format) and base64: the browser inflates it with DecompressionStream. */
static void put_deflated(golden_html *h, const char *s, size_t n)
{
    uLongf cap = compressBound((uLong)n);
    unsigned char *z = malloc(cap);
    if (!z || compress2(z, &cap, (const Bytef *)s, (uLong)n, 6) != Z_OK) {
        free(z);
        h->oom = true;
        return;
    }
    put_base64(h, z, cap);
    free(z);
}

void golden_html_json(golden_html *h, const json_t *doc)
{
    if (!h)
        return;
    char *s = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    if (!s) {
        h->oom = true;
        return;
    }
    size_t n = strlen(s);
    golden_html_raw(h, "<p class=\"note json-link\">The numbers behind every picture: <a id=\"json-link\" "
                       "download=\"report.json\">the report as JSON</a> (also embedded in this file, "
                       "see docs/reports.md).</p>\n");
    if (n > GOLDEN_HTML_DEFLATE_OVER) {
        golden_html_raw(h, "<script type=\"application/octet-stream\" id=\"report-json\" "
                           "data-encoding=\"deflate-base64\">");
        put_deflated(h, s, n);
    } else {
        golden_html_raw(h, "<script type=\"application/json\" id=\"report-json\">");
        put_json_text(h, s, n);
    }
    free(s);
    golden_html_raw(h, "</script>\n");
}

void golden_html_json_table(golden_html *h, const char *id, const char *path,
                            const char *const *cols, size_t n_cols, bool fail_first)
{
    golden_html_raw(h, "<table class=\"sortable\" id=\"");
    golden_html_text(h, id);
    golden_html_raw(h, "\" data-rows=\"");
    golden_html_text(h, path);
    golden_html_raw(h, "\" data-keys=\"");
    for (size_t i = 0; i < n_cols; i++) {
        const char *bar = strchr(cols[i], '|');
        size_t kl = bar ? (size_t)(bar - cols[i]) : strlen(cols[i]);
        if (i)
            golden_html_raw(h, ",");
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(kl < 127 ? kl : 127), cols[i]);
        golden_html_text(h, key);
    }
    golden_html_raw(h, fail_first ? "\" data-fail-first><thead><tr>" : "\"><thead><tr>");
    for (size_t i = 0; i < n_cols; i++) {
        const char *bar = strchr(cols[i], '|');
        golden_html_raw(h, "<th>");
        golden_html_text(h, bar ? bar + 1 : cols[i]);
        golden_html_raw(h, "</th>");
    }
    golden_html_raw(h, "</tr></thead><tbody></tbody></table>\n");
}

int golden_html_write(golden_html *h, const char *path, bool force, golden_error *err)
{
    golden_html_raw(h, "<script>\n");
    golden_html_raw(h, js_tables);
    golden_html_raw(h, "</script>\n</body></html>\n");
    if (!h || h->oom)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory building the HTML report");
    golden_outfile *f;
    if (golden_outfile_open(path, force, &f, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    if (fwrite(h->buf, 1, h->len, golden_outfile_stream(f)) != h->len) {
        golden_outfile_abort(f);
        return golden_fail_what(err, GOLDEN_EIO, path, "cannot write the HTML report");
    }
    return golden_outfile_commit(f, err);
}

int html_finish(golden_html *h, int body_rc, const json_t *doc, const char *path, bool force,
                golden_error *err)
{
    if (!h || body_rc != 0) {
        golden_html_free(h);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory building the HTML report");
    }
    golden_html_json(h, doc);
    int rc = golden_html_write(h, path, force, err);
    golden_html_free(h);
    return rc;
}
