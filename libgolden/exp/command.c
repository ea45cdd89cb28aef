/* Compile commands split the way a POSIX shell would split a plain command line, then read as
 * options: what is built (-o, --output, --model, --graph, --chips) apart from the flags. */
#include "exp/command.h"
#include "util/utf8.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/vec.h"

/* Options that name what is compiled and where it goes; they take a value and are no flags. */
static const char *const target_options[] = {"-o", "--output", "--model", "--graph", "--chips",
                                             NULL};

typedef struct {
    char **v;
    size_t n, cap;
} words;

static void words_free(words *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i]);
    free(w->v);
}

static int words_push(words *w, const char *s, size_t len)
{
    if (VEC_GROW(w->v, w->n, w->cap, 16) != 0)
        return -1;
    char *c = malloc(len + 1);
    if (!c)
        return -1;
    memcpy(c, s, len);
    c[len] = '\0';
    w->v[w->n++] = c;
    return 0;
}

/* Shell splitting without expansion: blanks separate words; '...' is literal; "..." is literal
 * except \" \\ \$ \`; a backslash outside quotes escapes the next byte. Anything the shell
 * would interpret (expansion, redirection, pipes, globs, command lists) is refused, because the
 * command that ran would not be the text we read. 1 = ok, 0 = refused (why), -1 = OOM. */
static int split(const char *cmd, words *w, char *why, size_t whyn)
{
    size_t cap = strlen(cmd) + 1, len = 0;
    char *cur = malloc(cap);
    if (!cur)
        return -1;
    bool in_word = false;
    int rc = 1;
    for (const char *p = cmd;; p++) {
        char ch = *p;
        if (ch == '\0' || ch == ' ' || ch == '\t' || ch == '\n') {
            if (in_word && words_push(w, cur, len) != 0) {
                rc = -1;
                break;
            }
            in_word = false;
            len = 0;
            if (ch == '\0')
                break;
            continue;
        }
        in_word = true;
        if (ch == '\'') {
            const char *e = strchr(p + 1, '\'');
            if (!e) {
                snprintf(why, whyn, "an unterminated single quote");
                rc = 0;
                break;
            }
            memcpy(cur + len, p + 1, (size_t)(e - p - 1));
            len += (size_t)(e - p - 1);
            p = e;
        } else if (ch == '"') {
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1] && strchr("\"\\$`", p[1])) {
                    cur[len++] = *++p;
                } else if (*p == '$' || *p == '`') {
                    snprintf(why, whyn, "shell expansion ('%c') inside double quotes", *p);
                    rc = 0;
                    break;
                } else {
                    cur[len++] = *p;
                }
            }
            if (rc == 1 && *p != '"') {
                snprintf(why, whyn, "an unterminated double quote");
                rc = 0;
            }
            if (rc != 1)
                break;
        } else if (ch == '\\') {
            if (!p[1]) {
                snprintf(why, whyn, "a trailing backslash");
                rc = 0;
                break;
            }
            cur[len++] = *++p;
        } else if (strchr("$`;|&<>()*?[]{}~#=", ch) && (ch != '=' || len == 0)) {
            /* '=' is only special as a word's first byte (an environment assignment is fine
             * elsewhere: --k=v); '#' and '~' are special there too but harmless inside */
            if ((ch == '#' || ch == '~') && len > 0) {
                cur[len++] = ch;
                continue;
            }
            snprintf(why, whyn, "shell syntax '%c' that this check does not interpret", ch);
            rc = 0;
            break;
        } else {
            cur[len++] = ch;
        }
    }
    free(cur);
    return rc;
}

static bool is_target(const char *opt, size_t len)
{
    for (int i = 0; target_options[i]; i++)
        if (strlen(target_options[i]) == len && strncmp(target_options[i], opt, len) == 0)
            return true;
    return false;
}

static bool valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    while (n) {
        size_t k = *p < 0x80 ? 1 : lg_utf8_seq(p, n);
        if (!k)
            return false;
        p += k;
        n -= k;
    }
    return true;
}

/* Add name -> value; a flag given twice is refused (which one the compiler keeps is its
 * business, and the manifest can record only one). 1 ok, 0 refused, -1 OOM. */
static int put_flag(json_t *flags, const char *name, size_t nlen, json_t *value, char *why,
                    size_t whyn)
{
    if (!value)
        return -1;
    char key[256];
    if (nlen >= sizeof key) {
        json_decref(value);
        snprintf(why, whyn, "an option name of %zu bytes", nlen);
        return 0;
    }
    for (size_t i = 0; i < nlen; i++)
        key[i] = name[i] == '-' ? '_' : name[i];
    key[nlen] = '\0';
    if (json_object_get(flags, key)) {
        json_decref(value);
        snprintf(why, whyn, "flag --%.*s given twice", (int)nlen, name);
        return 0;
    }
    return json_object_set_new(flags, key, value) == 0 ? 1 : -1;
}

static int read_options(const words *w, json_t *flags, char *why, size_t whyn)
{
    bool options_end = false;
    for (size_t i = 0; i < w->n; i++) {
        const char *t = w->v[i];
        if (t[0] != '-' && strchr(t, '=')) {
            /* VAR=x calcc ... changes the build invisibly; key=value arguments are ambiguous */
            snprintf(why, whyn, "'%s' (an environment assignment or a key=value argument)", t);
            return 0;
        }
        if (options_end || t[0] != '-' || strcmp(t, "-") == 0)
            continue; /* the program, a subcommand, an input: not a flag */
        if (strcmp(t, "--") == 0) {
            options_end = true;
            continue;
        }
        const char *eq = strchr(t, '=');
        size_t olen = eq ? (size_t)(eq - t) : strlen(t);
        if (is_target(t, olen)) {
            if (!eq && (i + 1 >= w->n || w->v[i + 1][0] == '-')) {
                snprintf(why, whyn, "%s wants a value", t);
                return 0;
            }
            if (!eq)
                i++;
            continue;
        }
        if (t[1] != '-') {
            snprintf(why, whyn, "short option '%s' (write flags as --name=value)", t);
            return 0;
        }
        const char *name = t + 2;
        size_t nlen = olen - 2;
        if (nlen == 0 || name[0] == '-' || name[0] == '_') {
            snprintf(why, whyn, "option '%s' has no proper name", t);
            return 0;
        }
        const char *text = eq ? eq + 1
                           : (i + 1 < w->n && w->v[i + 1][0] != '-') ? w->v[++i] : NULL;
        /* jansson refuses bytes that are not UTF-8; say so, and keep NULL for out of memory */
        if (text && !valid_utf8(text)) {
            snprintf(why, whyn, "the value of --%.*s is not UTF-8", (int)nlen, name);
            return 0;
        }
        json_t *value = text ? json_string(text) : json_true();
        int r = put_flag(flags, name, nlen, value, why, whyn);
        if (r <= 0) {
            if (r < 0)
                why[0] = '\0';
            return r;
        }
    }
    return 1;
}

json_t *lg_exp_command_flags(const char *cmd, char *why, size_t whyn)
{
    why[0] = '\0';
    words w = {0};
    json_t *flags = NULL;
    int r = split(cmd, &w, why, whyn);
    if (r == 1 && w.n == 0) {
        snprintf(why, whyn, "the command is empty");
        r = 0;
    }
    if (r == 1 && !(flags = json_object()))
        r = -1;
    if (r == 1)
        r = read_options(&w, flags, why, whyn);
    words_free(&w);
    if (r != 1) {
        json_decref(flags);
        if (r < 0)
            why[0] = '\0';
        return NULL;
    }
    return flags;
}
