/* Readable .NET method names, from names a real perf map held: the lines of
 * /tmp/perf-<pid>.map written by tests/dotnet/WebMix under load
 * (DOTNET_PerfMapEnabled=1, .NET 10), and the shape the ReadyToRun and
 * jitdump readers give precompiled methods ("[PreJIT]"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "managed_name.h"

#include <stdlib.h>
#include <string.h>

static void expect_readable(const char *runtime_name, bool keep_tier, const char *expected)
{
	char *readable = managed_name_readable(runtime_name, keep_tier);

	assert_non_null(readable);
	assert_string_equal(readable, expected);
	free(readable);
}

static void test_return_type_parameters_and_tier_go(void **state)
{
	(void)state;
	expect_readable("instance int32 [System.Private.CoreLib] System.Version::get_Major()"
			"[InstrumentedTierOptimized]",
			false, "System.Private.CoreLib!System.Version::get_Major");
	expect_readable("void [webmix] Program::<Main>(string[])[QuickJitted]", false,
			"webmix!Program::<Main>");
	/* An assembly-qualified return type comes before the method's own. */
	expect_readable("class [System.Runtime]System.Text.Encoding [Microsoft.AspNetCore.Http."
			"Results] Microsoft.AspNetCore.Internal.ResponseContentTypeHelper::"
			"GetEncoding(string)[InstrumentedTierOptimized]",
			false,
			"Microsoft.AspNetCore.Http.Results!Microsoft.AspNetCore.Internal."
			"ResponseContentTypeHelper::GetEncoding");
	expect_readable(
	    "instance void [System.Private.CoreLib] System.Text."
	    "EncoderReplacementFallbackBuffer::.ctor(class System.Text."
	    "EncoderReplacementFallback)[InstrumentedTierOptimized]",
	    false, "System.Private.CoreLib!System.Text.EncoderReplacementFallbackBuffer::.ctor");
	/* The ReadyToRun readers' shape. */
	expect_readable(
	    "void [System.Private.CoreLib] System.Collections.Generic."
	    "ArraySortHelper`1[System.Int32]::PickPivotAndPartition(valuetype "
	    "System.Span`1<!0>)[PreJIT]",
	    false,
	    "System.Private.CoreLib!System.Collections.Generic.ArraySortHelper`1[Int32]::"
	    "PickPivotAndPartition");
}

static void test_tier_kept_when_asked(void **state)
{
	(void)state;
	expect_readable("instance int32 [System.Private.CoreLib] System.Version::get_Major()"
			"[OptimizedTier1]",
			true, "System.Private.CoreLib!System.Version::get_Major [OptimizedTier1]");
	expect_readable("void [webmix] Program::<Main>(string[])[QuickJitted]", true,
			"webmix!Program::<Main> [QuickJitted]");
}

static void test_generic_arguments_lose_namespaces(void **state)
{
	(void)state;
	expect_readable(
	    "instance !1 [System.Collections.Concurrent] System.Collections.Concurrent."
	    "ConcurrentDictionary`2[System.__Canon,Microsoft.Extensions.FileProviders.Physical."
	    "PhysicalFilesWatcher+ChangeTokenInfo]::GetOrAdd(!0,!1)[QuickJitted]",
	    false,
	    "System.Collections.Concurrent!System.Collections.Concurrent.ConcurrentDictionary`2["
	    "__Canon,PhysicalFilesWatcher+ChangeTokenInfo]::GetOrAdd");
	/* Nested generic arguments, and nested types of a generic type. */
	expect_readable("instance !!0 [System.Text.Json] System.Text.Json.Serialization.Metadata."
			"ReflectionEmitCachingMemberAccessor+Cache`1[System.ValueTuple`3[System."
			"__Canon,System.__Canon,System.__Canon]]::GetOrAdd(!0,class [System."
			"Runtime]System.Func`2<!0,!!0>)[QuickJitted]",
			false,
			"System.Text.Json!System.Text.Json.Serialization.Metadata."
			"ReflectionEmitCachingMemberAccessor+Cache`1[ValueTuple`3[__Canon,__Canon,"
			"__Canon]]::GetOrAdd");
	expect_readable("instance void [System.Private.CoreLib] System.Runtime.InteropServices."
			"Marshalling.SafeHandleMarshaller`1+ManagedToUnmanagedIn[System.__Canon]::"
			"Free()[OptimizedTier1]",
			false,
			"System.Private.CoreLib!System.Runtime.InteropServices.Marshalling."
			"SafeHandleMarshaller`1+ManagedToUnmanagedIn[__Canon]::Free");
}

static void test_method_table_comments_go(void **state)
{
	(void)state;
	expect_readable("System.Threading.Tasks.Task /* MT: 0x7f2825526da0 */ [Anonymously Hosted "
			"DynamicMethods Assembly] dynamicClass::lambda_method1(System.Runtime."
			"CompilerServices.Closure /* MT: 0x7f2828d53db0 */,object,Microsoft."
			"AspNetCore.Http.HttpContext /* MT: 0x7f2827e4c448 */)[Optimized]",
			false,
			"Anonymously Hosted DynamicMethods Assembly!dynamicClass::lambda_method1");
	expect_readable(
	    "object [System.Private.CoreLib] dynamicClass::InvokeStub_"
	    "EventSourceAttribute.set_Name(object,System.Span`1 /* MT: 0x7f282551fe30 "
	    "*/<object>)[Optimized]",
	    false, "System.Private.CoreLib!dynamicClass::InvokeStub_EventSourceAttribute.set_Name");
}

/* The longest name of that perf map: 590 characters. */
static void test_long_names_become_short(void **state)
{
	static const char name[] =
	    "instance valuetype [System.Net.Primitives]System.Net.Sockets.SocketError "
	    "[System.Net.Sockets] System.Net.Sockets.SocketAsyncContext::SendToAsync(valuetype "
	    "[System.Runtime]System.Memory`1<uint8>,int32,int32,valuetype System.Net.Sockets."
	    "SocketFlags,valuetype [System.Runtime]System.Memory`1<uint8>,int32&,class "
	    "[System.Runtime]System.Action`4<int32,valuetype [System.Runtime]System.Memory`1<"
	    "uint8>,valuetype System.Net.Sockets.SocketFlags,valuetype [System.Net.Primitives]"
	    "System.Net.Sockets.SocketError>,valuetype [System.Runtime]System.Threading."
	    "CancellationToken)[InstrumentedTierOptimized]";
	char long_name[1024];

	(void)state;
	expect_readable(name, false,
			"System.Net.Sockets!System.Net.Sockets.SocketAsyncContext::SendToAsync");
	/* Generic arguments that stay too long even without namespaces are left out. */
	strcpy(long_name, "void [Big] Ns.Outer`1[");
	for (int i = 0; i < 30; i++)
		strcat(long_name, i ? ",Ns.Argument" : "Ns.Argument");
	strcat(long_name, "]+Inner`1[Ns.Item]::Run()[QuickJitted]");
	expect_readable(long_name, false, "Big!Ns.Outer`1[...]+Inner`1[...]::Run");
}

/* Names that are no .NET method stay as they are (NULL). */
static void test_other_names_are_left_alone(void **state)
{
	static const char *const others[] = {
	    "stub<1> AllocateTemporaryEntryPoints<PRECODE_FIXUP>",
	    "stub CreateHelper<DynamicHelper>",
	    "[unknown]",
	    "[libcoreclr.so]",
	    "MethodDesc::DoPrestub(MethodTable*)",
	    "std::vector<int, std::allocator<int> >::push_back(int const&)",
	    "LazyCompile:*fib /app/fib.js:1",
	    "[System.Private.CoreLib] ::Broken()",
	    "void [] Ns.Type::Method()[QuickJitted]",
	    "",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++) {
		char *readable = managed_name_readable(others[i], false);

		if (readable)
			fail_msg("\"%s\" became \"%s\"", others[i], readable);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_return_type_parameters_and_tier_go),
	    cmocka_unit_test(test_tier_kept_when_asked),
	    cmocka_unit_test(test_generic_arguments_lose_namespaces),
	    cmocka_unit_test(test_method_table_comments_go),
	    cmocka_unit_test(test_long_names_become_short),
	    cmocka_unit_test(test_other_names_are_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
