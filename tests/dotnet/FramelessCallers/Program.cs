// A .NET workload whose hot path runs through methods that keep no frame
// pointer: Middle and Outer each make one call and nothing else, so
// crossgen2 and the JIT's optimized code give them a frame described by the
// stack pointer alone ("push rax"). A frame-pointer walk from Spin skips
// them: Spin's saved rbp is Main's. Published with PublishReadyToRun and
// run with DOTNET_TC_CallCounting=0, the methods stay in their ReadyToRun
// code; with DOTNET_ReadyToRun=0 DOTNET_TieredCompilation=0 they are
// jitted, optimized at once. Prints "ready" once the loop runs.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Demo;

public static class Program
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static long Spin(int[] data, int rounds)
    {
        long sum = 0;
        for (int round = 0; round < rounds; round++)
            for (int i = 0; i < data.Length; i++)
                sum += data[i] ^ round;
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static long Middle(int[] data) => Spin(data, 50) + 1;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static long Outer(int[] data) => Middle(data) * 3;

    public static void Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0]) : 30;
        int[] data = new int[4_096];
        for (int i = 0; i < data.Length; i++)
            data[i] = i * 7;
        var clock = Stopwatch.StartNew();
        long total = 0;
        Console.WriteLine("ready");
        while (clock.Elapsed.TotalSeconds < seconds)
            total += Outer(data);
        Console.WriteLine(total != 0 ? "done" : "?");
    }
}
