/* The compile command of a calbin manifest split into its flags, so that a flag typed on the
 * command line but absent from compile.flags (or the reverse) is seen. Private to libgolden/exp. */
#ifndef GOLDEN_EXP_COMMAND_H
#define GOLDEN_EXP_COMMAND_H
#include <stddef.h>
#include <jansson.h>

/* Parse cmd (syntax in docs/manifest-verify.md, "The compile command"): returns a new object
 * flag name ('-' read as '_') -> value (a string, or true for a bare switch). NULL with why
 * filled when the command cannot be parsed; NULL with why empty when memory runs out. */
json_t *lg_exp_command_flags(const char *cmd, char *why, size_t whyn);

#endif
