/* Fitting a frame's name into its box: names longer than the box are cut
 * at a character boundary and end with an ellipsis; boxes too small for
 * three characters show no text (as in flamegraph.pl). */
#ifndef PROFCPU_TEXT_FIT_H
#define PROFCPU_TEXT_FIT_H

#include <stdbool.h>
#include <stddef.h>

#define ELLIPSIS "\xE2\x80\xA6" /* U+2026, one character wide */

/* How many bytes of the UTF-8 `text[0..length)` to show in `max_chars`
 * characters; sets *ellipsis when the shown part must be followed by
 * ELLIPSIS (which counts as one of the `max_chars`). */
size_t text_fit(const char *text, size_t length, size_t max_chars, bool *ellipsis);

#endif
