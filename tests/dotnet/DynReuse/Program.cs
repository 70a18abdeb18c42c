// Dynamic methods that free their code, one after another, so that later
// ones reuse the same addresses (a perf map names them all after the last).
//
//   dynreuse PHASES SECONDS_PER_PHASE
//
// Phase N builds a DynamicMethod named PhaseN, runs it for the given time,
// drops it and collects it before the next phase starts. Prints "ready",
// then for each phase "phase N START END" with its CLOCK_MONOTONIC times in
// nanoseconds (Stopwatch's clock on Linux), and "done" at the end.
using System;
using System.Diagnostics;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;

namespace Demo;

public static class Program
{
    // long PhaseN(long count): a loop that mixes N into its sum.
    private static Func<long, long> Build(int phase)
    {
        var method = new DynamicMethod($"Phase{phase}", typeof(long), new[] { typeof(long) });
        var il = method.GetILGenerator();
        var sum = il.DeclareLocal(typeof(long));
        var i = il.DeclareLocal(typeof(long));
        Label check = il.DefineLabel(), body = il.DefineLabel();
        il.Emit(OpCodes.Ldc_I8, 0L); il.Emit(OpCodes.Stloc, sum);
        il.Emit(OpCodes.Ldc_I8, 0L); il.Emit(OpCodes.Stloc, i);
        il.Emit(OpCodes.Br, check);
        il.MarkLabel(body);
        il.Emit(OpCodes.Ldloc, sum); il.Emit(OpCodes.Ldc_I8, 31L); il.Emit(OpCodes.Mul);
        il.Emit(OpCodes.Ldloc, i); il.Emit(OpCodes.Ldc_I8, (long)phase); il.Emit(OpCodes.Xor);
        il.Emit(OpCodes.Add); il.Emit(OpCodes.Stloc, sum);
        il.Emit(OpCodes.Ldloc, i); il.Emit(OpCodes.Ldc_I8, 1L); il.Emit(OpCodes.Add);
        il.Emit(OpCodes.Stloc, i);
        il.MarkLabel(check);
        il.Emit(OpCodes.Ldloc, i); il.Emit(OpCodes.Ldarg_0); il.Emit(OpCodes.Blt, body);
        il.Emit(OpCodes.Ldloc, sum); il.Emit(OpCodes.Ret);
        return method.CreateDelegate<Func<long, long>>();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static long RunPhase(int phase, double seconds)
    {
        Func<long, long> work = Build(phase);
        long start = Stopwatch.GetTimestamp(), total = 0;
        while (Stopwatch.GetElapsedTime(start).TotalSeconds < seconds)
            total += work(200_000);
        Console.WriteLine($"phase {phase} {start * (1_000_000_000 / Stopwatch.Frequency)} " +
                          $"{Stopwatch.GetTimestamp() * (1_000_000_000 / Stopwatch.Frequency)}");
        return total;
    }

    private static Func<long, long>? s_keeper;

    public static void Main(string[] args)
    {
        int phases = args.Length > 0 ? int.Parse(args[0]) : 6;
        double seconds = args.Length > 1 ? double.Parse(args[1]) : 1.5;
        // Kept alive, so that the code heap the dynamic methods share stays
        // and each freed method's space is handed to the next one.
        s_keeper = Build(0);
        long total = s_keeper(10);
        Console.WriteLine("ready");
        for (int phase = 1; phase <= phases; phase++) {
            total += RunPhase(phase, seconds);
            // The delegate is gone: collect the dynamic method and its code.
            for (int i = 0; i < 5; i++) {
                GC.Collect();
                GC.WaitForPendingFinalizers();
                System.Threading.Thread.Sleep(200);
            }
        }
        Console.WriteLine(total != 0 ? "done" : "?");
    }
}
