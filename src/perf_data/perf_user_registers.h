/* The user registers profcpu has perf sample for its own stack walk, and the
 * walk's registers read back from a sample: what differs by the machine
 * profcpu is built for, one file each (perf_user_registers_x86_64.c,
 * perf_user_registers_aarch64.c; meson picks the host's). */
#ifndef PROFCPU_PERF_USER_REGISTERS_H
#define PROFCPU_PERF_USER_REGISTERS_H

#include "call_frame_info.h"
#include "perf_data.h"

#include <stdbool.h>
#include <stdint.h>

/* The sample_regs_user mask: the registers perf record --call-graph dwarf
 * takes on this machine, so that perf's unwinders read our perf.data. */
extern const uint64_t perf_user_registers;

/* The machine the registers are this build's: its own. */
extern const enum frame_machine perf_user_registers_machine;

/* The registers a walk starts from (machine, ip, sp, frame pointer, lr,
 * and the other general registers into `general`, which `registers` then
 * points to), from `sample`'s user registers. False when the sample has
 * none (a kernel thread's) or lacks one of the first. */
bool perf_sample_frame_registers(const struct perf_sample *sample,
				 struct frame_registers *registers,
				 struct general_registers *general);

#endif
