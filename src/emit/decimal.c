#include "decimal.h"

#include <string.h>

/* "00" to "99": two digits a division. */
static const char digit_pairs[] = "00010203040506070809101112131415161718192021222324"
				  "25262728293031323334353637383940414243444546474849"
				  "50515253545556575859606162636465666768697071727374"
				  "75767778798081828384858687888990919293949596979899";

void decimal_append_padded(char **cursor, uint64_t value, int width, char pad, bool left_aligned)
{
	char digits[20], *first = digits + sizeof(digits);
	int count;

	while (value >= 100) {
		first -= 2;
		memcpy(first, &digit_pairs[value % 100 * 2], 2);
		value /= 100;
	}
	if (value >= 10) {
		first -= 2;
		memcpy(first, &digit_pairs[value * 2], 2);
	} else {
		*--first = (char)('0' + value);
	}
	count = (int)(digits + sizeof(digits) - first);
	for (int i = count; !left_aligned && i < width; i++)
		*(*cursor)++ = pad;
	memcpy(*cursor, first, (size_t)count);
	*cursor += count;
	for (int i = count; left_aligned && i < width; i++)
		*(*cursor)++ = ' ';
}

void decimal_append(char **cursor, uint64_t value)
{
	decimal_append_padded(cursor, value, 0, ' ', false);
}
