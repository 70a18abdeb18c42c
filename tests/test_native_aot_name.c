/* Readable names for NativeAOT symbols, from symbols the .NET 10 NativeAOT
 * compiler wrote for tests/dotnet/HotLoop (nm hotloop.dbg), and from names
 * of a form that must stay as they are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "native_aot_name.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_readable(const char *symbol, const char *expected)
{
	char *name = native_aot_name(symbol);

	if (!expected) {
		if (name)
			fail_msg("%s was read as %s", symbol, name);
		return;
	}
	if (!name)
		fail_msg("%s was not read", symbol);
	assert_string_equal(name, expected);
	free(name);
}

static void test_app_methods(void **state)
{
	(void)state;
	assert_readable("hotloop_Demo_Program__HotMethod", "hotloop!Demo.Program::HotMethod");
	/* the namespace repeats the assembly's name */
	assert_readable("PrimeWorker_PrimeWorker_Program__FindPrimeNumber",
			"PrimeWorker!PrimeWorker.Program::FindPrimeNumber");
	assert_readable("Acme_Orders_Acme_Orders_Api_Handler__Run",
			"Acme.Orders!Acme.Orders.Api.Handler::Run");
}

static void test_framework_methods(void **state)
{
	(void)state;
	assert_readable(
	    "S_P_CoreLib_System_Collections_Generic_ArraySortHelper_1<Int32>__"
	    "PickPivotAndPartition",
	    "System.Private.CoreLib!System.Collections.Generic.ArraySortHelper`1[Int32]::"
	    "PickPivotAndPartition");
	assert_readable(
	    "S_P_CoreLib_Internal_TypeSystem_LockFreeReaderHashtable_2<IntPtr__System___"
	    "Canon>__TryGetValue",
	    "System.Private.CoreLib!Internal.TypeSystem.LockFreeReaderHashtable`2[IntPtr,"
	    "__Canon]::TryGetValue");
	assert_readable("S_P_TypeLoader_Internal_NativeFormat_NativeHashtable__Lookup",
			"System.Private.TypeLoader!Internal.NativeFormat.NativeHashtable::Lookup");
	assert_readable("S_P_Reflection_Execution_Internal_Reflection_Execution_"
			"ExecutionEnvironmentImplementation__GetMethodInvoker",
			"System.Private.Reflection.Execution!Internal.Reflection.Execution."
			"ExecutionEnvironmentImplementation::GetMethodInvoker");
	assert_readable("System_Linq_System_Linq_Enumerable__Where",
			"System.Linq!System.Linq.Enumerable::Where");
	assert_readable("System_Console_Interop_Sys__Dup", "System.Console!Interop.Sys::Dup");
	assert_readable("Int32__ToString", "System.Private.CoreLib!System.Int32::ToString");
	assert_readable("Bool__GetHashCode", "System.Private.CoreLib!System.Boolean::GetHashCode");
}

static void test_constructors_and_arguments(void **state)
{
	(void)state;
	assert_readable("Object___ctor", "System.Private.CoreLib!System.Object::.ctor");
	/* the number telling overloads apart is dropped */
	assert_readable("S_P_CoreLib_System_ArgumentException___ctor_3",
			"System.Private.CoreLib!System.ArgumentException::.ctor");
	assert_readable("System_Console_Interop_Sys_FileDescriptors___cctor",
			"System.Console!Interop.Sys.FileDescriptors::.cctor");
	/* an array and a generic instance as arguments, each by its short name */
	assert_readable("S_P_CoreLib_System_Collections_Generic_List_1<__Array<Int32>__S_P_CoreLib_"
			"System_Collections_Generic_KeyValuePair_2<String__Int32>>__Add",
			"System.Private.CoreLib!System.Collections.Generic.List`1[Int32[],"
			"KeyValuePair`2[String,Int32]]::Add");
	assert_readable("System_Console_Interop__CheckIo_1<System___Canon>",
			"System.Console!Interop::CheckIo_1[__Canon]");
}

static void test_long_names_lose_their_arguments(void **state)
{
	static const char dictionary[] =
	    "S_P_CoreLib_System_Collections_Generic_Dictionary_2<String__S_P_CoreLib_System_"
	    "Collections_Generic_List_1<S_P_CoreLib_System_Collections_Generic_HashSet_1<String>>>";
	char symbol[1200], *name;

	(void)state;
	/* four arguments of 50 characters each: the name would pass 200 */
	snprintf(symbol, sizeof(symbol), "S_P_CoreLib_System_Tuple_4<%s__%s__%s__%s>__Equals",
		 dictionary, dictionary, dictionary, dictionary);
	name = native_aot_name(symbol);
	assert_non_null(name);
	assert_string_equal(name, "System.Private.CoreLib!System.Tuple`4[...]::Equals");
	free(name);
}

/* "App_T<App_T<...>>__Run", `depth` arguments deep (malloc'd), and the
 * name it reads as when `name` is not NULL. */
static char *nested_symbol(size_t depth, char **name)
{
	char *symbol = malloc(depth * 7 + 16), *at = symbol;

	assert_non_null(symbol);
	strcpy(at, "App_T");
	for (size_t i = 0; i < depth; i++)
		strcpy(at += strlen(at), "<App_T");
	at += strlen(at);
	memset(at, '>', depth);
	strcpy(at + depth, "__Run");
	if (name) {
		*name = malloc(depth * 3 + 16);
		assert_non_null(*name);
		at = *name;
		strcpy(at, "App!T");
		for (size_t i = 0; i < depth; i++)
			strcpy(at += strlen(at), "[T");
		at += strlen(at);
		memset(at, ']', depth);
		strcpy(at + depth, "::Run");
	}
	return symbol;
}

/* The symbol is the target's: arguments nested past 32 levels are no
 * name a compiler wrote, and are not read (each level was a call and a
 * scan of the rest: 200,000 levels overflowed the stack under ASan, and
 * 60,000 took 12 s). */
static void test_nesting_is_bounded(void **state)
{
	char *symbol, *name;

	(void)state;
	symbol = nested_symbol(32, &name);
	assert_readable(symbol, name);
	free(symbol);
	free(name);
	symbol = nested_symbol(33, NULL);
	assert_readable(symbol, NULL);
	free(symbol);
	symbol = nested_symbol(200000, NULL);
	assert_readable(symbol, NULL);
	free(symbol);
	/* arrays nest too */
	assert_readable("App_T<__Array<__Array<Int32>>>__Run", "App!T[Int32[][]]::Run");
	symbol = malloc(40 * 8 + 64);
	assert_non_null(symbol);
	strcpy(symbol, "App_T<");
	for (int i = 0; i < 40; i++)
		strcat(symbol, "__Array<");
	strcat(symbol, "Int32");
	for (int i = 0; i < 41; i++)
		strcat(symbol, ">");
	strcat(symbol, "__Run");
	assert_readable(symbol, NULL);
	free(symbol);
}

static void test_kept_as_they_are(void **state)
{
	(void)state;
	/* C and C++ of the runtime linked in */
	assert_readable("RhpNewFast", NULL);
	assert_readable("memcpy", NULL);
	assert_readable("__managed__Main", NULL);
	/* compiler-generated: <>c, <Main>b__0_0, field helpers, module code */
	assert_readable("hotloop_Demo_Program___c___Main_b__0_0", NULL);
	assert_readable("S_P_CoreLib_System_Buffers_SearchValues_TrueConst____GetFieldHelper",
			NULL);
	assert_readable("hotloop__Module___StartupCodeMain", NULL);
	/* boxing and unboxing stubs */
	assert_readable("unbox_Int32__ToString", NULL);
	assert_readable("<Boxed>S_P_CoreLib_System_ReadOnlySpan_1<System___Canon>__<unbox>S_P_"
			"CoreLib_System_ReadOnlySpan_1__Equals",
			NULL);
	/* brackets that do not close, or close too early */
	assert_readable("S_P_CoreLib_System_List_1<Int32__Add", NULL);
	assert_readable("S_P_CoreLib_System_List_1<Int32>>__Add", NULL);
	assert_readable("S_P_CoreLib_System_List_1>Int32<__Add", NULL);
	assert_readable("S_P_CoreLib_System_List_1<>__Add", NULL);
	/* an owner of one word that is not a CoreLib primitive */
	assert_readable("foo__bar", NULL);
	assert_readable("a__", NULL);
	assert_readable("", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_app_methods),
	    cmocka_unit_test(test_framework_methods),
	    cmocka_unit_test(test_constructors_and_arguments),
	    cmocka_unit_test(test_long_names_lose_their_arguments),
	    cmocka_unit_test(test_nesting_is_bounded),
	    cmocka_unit_test(test_kept_as_they_are),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
