"""Writes the assembly of deep_name.c's hot function under a NativeAOT-style
symbol whose generic arguments nest DEPTH deep ("App_T<App_T<...>>__Run"),
as native_aot_name.h reads a method's name, and deep_name_spin, the jump
to it C calls. Usage: deep_name_symbol.py OUTPUT [DEPTH]"""
import sys

depth = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
name = '"App_T' + "<App_T" * depth + ">" * depth + '__Run"'
with open(sys.argv[1], "w") as out:
    out.write(f"""\t.text
\t.globl deep_name_spin
\t.type deep_name_spin, @function
deep_name_spin:
\tjmp {name}
\t.size deep_name_spin, . - deep_name_spin
\t.globl {name}
\t.type {name}, @function
{name}:
\t.cfi_startproc
1:\tdec %rdi
\tjnz 1b
\tret
\t.cfi_endproc
\t.size {name}, . - {name}
\t.section .note.GNU-stack,"",@progbits
""")
