/* A hostile neighbour: a process that looks like a .NET app compiled ahead
 * of time (it exports DotNetRuntimeDebugHeader, which is how profcpu knows
 * one, symbols/resolve/native_symbols.c) and stays on the CPU in a
 * function whose symbol is a NativeAOT-style name with generic arguments
 * nested 20,000 deep ("App_T<App_T<...>>__Run", 140 KB, written by
 * deep_name_symbol.py). Reading such a name level by level overflowed the
 * stack of an ASan build and took seconds in a release one
 * (symbols/native/native_aot_name.c bounds the nesting). Its frames must
 * stay unnamed by that reader (deep_name_spin only jumps there) and
 * cost nothing else.
 *
 * Usage: workload_deep_name   runs until killed, nearly all of its time in
 * that function. x86-64 only. */
#include <stdint.h>

/* What the NativeAOT runtime exports; only its name matters here. */
__attribute__((visibility("default"), used)) const uint8_t DotNetRuntimeDebugHeader[16];

void deep_name_spin(uint64_t iterations);

int main(void)
{
	for (;;)
		deep_name_spin(100000000);
}
