/* Readable names for the symbols of a NativeAOT executable, as the JIT's
 * frames are named (managed_name.h): "Assembly!Namespace.Type::Method".
 *
 * The compiler (dotnet/runtime's NativeAotNameMangler) names a method
 * OWNER__METHOD. The owner is the assembly's name, the namespace and the
 * type's names (enclosing types first) joined by '_', in which every
 * character but a letter, digit or '_' became '_' ("System.Private." is
 * shortened to "S_P_", and CoreLib's primitive types are named alone:
 * Int32, String, ...); a generic instance adds its arguments' owners in
 * "<A__B>", the arity "`1" becomes "_1", and ".ctor" becomes "_ctor":
 *
 *   S_P_CoreLib_System_Collections_Generic_ArraySortHelper_1<Int32>__Sort
 *   System.Private.CoreLib!System.Collections.Generic.ArraySortHelper`1[Int32]::Sort
 *
 * The '_' that replaced a '.' cannot be told from one in a name, so where
 * the assembly's name ends is a guess (assembly_length in the .c), and
 * nested types read as namespaces. Names whose form is ambiguous beyond
 * that (compiler-generated types and methods such as <>c and
 * <Main>b__0_0, whose brackets became "__"; boxing and unboxing stubs)
 * are not reversed, nor are generic arguments or arrays nested more than
 * 32 deep (the symbol is the target's: each level costs a call). */
#ifndef PROFCPU_NATIVE_AOT_NAME_H
#define PROFCPU_NATIVE_AOT_NAME_H

/* The readable name of the NativeAOT method symbol `symbol` (malloc'd), or
 * NULL when it does not have that form (a C or C++ function of the runtime
 * linked into the executable, or a name not reversed). */
char *native_aot_name(const char *symbol);

#endif
