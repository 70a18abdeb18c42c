/* What the call_frame_info tests of each machine share: this test
 * program's own CFI as a cmocka fixture, file addresses of its code, and a
 * small stack copy to step over. */
#ifndef PROFCPU_TESTS_OWN_CFI_H
#define PROFCPU_TESTS_OWN_CFI_H

#include <stdint.h>

/* The address of `code` in the program's file, as its CFI names it. */
uint64_t file_address(const char *code);

/* cmocka setup and teardown: the program's own call_frame_info in *state. */
int open_own_cfi(void **state);
int close_own_cfi(void **state);

/* A stack copy of 8 words at address STACK_START; word i holds 0x1000 + i. */
extern const uint64_t words[8];
enum { STACK_START = 0x7000 };

#endif
