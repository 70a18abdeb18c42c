/* Interned strings: one copy of each, compared by pointer. */
#ifndef PROFCPU_STRING_TABLE_H
#define PROFCPU_STRING_TABLE_H

struct string_table;

struct string_table *string_table_new(void);
void string_table_free(struct string_table *table);

/* The table's copy of `string`, stable until the table is freed. */
const char *string_table_intern(struct string_table *table, const char *string);

#endif
