#include "text_fit.h"

static bool is_continuation_byte(char c)
{
	return ((unsigned char)c & 0xC0) == 0x80;
}

size_t text_fit(const char *text, size_t length, size_t max_chars, bool *ellipsis)
{
	size_t chars = 0, keep = 0;

	*ellipsis = false;
	if (max_chars < 3)
		return 0;
	if (length <= max_chars) /* the common case: ASCII that fits */
		return length;
	for (size_t i = 0; i < length; i++) {
		if (is_continuation_byte(text[i]))
			continue;
		/* Remember where character number max_chars - 1 starts: the
		 * cut if the text turns out too long. */
		if (chars == max_chars - 1)
			keep = i;
		if (++chars > max_chars) {
			*ellipsis = true;
			return keep;
		}
	}
	return length;
}
