#include "decimal.h"

void decimal_append_padded(char **cursor, uint64_t value, int width, char pad, bool left_aligned)
{
	char digits[20];
	int count = 0;

	do {
		digits[count++] = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	for (int i = count; !left_aligned && i < width; i++)
		*(*cursor)++ = pad;
	for (int i = count - 1; i >= 0; i--)
		*(*cursor)++ = digits[i];
	for (int i = count; left_aligned && i < width; i++)
		*(*cursor)++ = ' ';
}

void decimal_append(char **cursor, uint64_t value)
{
	decimal_append_padded(cursor, value, 0, ' ', false);
}
