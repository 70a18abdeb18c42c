// A .NET workload whose time goes to precompiled (ReadyToRun) framework
// code: Array.Sort of ints (ArraySortHelper) and Dictionary lookups
// (Dictionary.FindValue). Run with DOTNET_TC_CallCounting=0 so that the
// framework methods stay in their ReadyToRun code instead of being re-jitted
// into the perf map; run with DOTNET_ReadyToRun=0 for the JIT-only control.
// Prints "ready" once the loop runs.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Demo;

public static class Program
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int SortRound(int[] source, int[] scratch)
    {
        Array.Copy(source, scratch, source.Length);
        Array.Sort(scratch);
        return scratch[scratch.Length / 2];
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static long LookupRound(Dictionary<string, int> table, string[] keys)
    {
        long sum = 0;
        foreach (string key in keys)
            if (table.TryGetValue(key, out int value))
                sum += value;
        return sum;
    }

    public static void Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0]) : 30;
        var random = new Random(42);
        int[] source = new int[20_000], scratch = new int[20_000];
        for (int i = 0; i < source.Length; i++)
            source[i] = random.Next();
        var table = new Dictionary<string, int>();
        string[] keys = new string[4_000];
        for (int i = 0; i < keys.Length; i++) {
            keys[i] = "key-" + random.Next();
            table[keys[i]] = i;
        }
        var clock = Stopwatch.StartNew();
        long total = 0;
        Console.WriteLine("ready");
        while (clock.Elapsed.TotalSeconds < seconds)
            total += SortRound(source, scratch) + LookupRound(table, keys);
        Console.WriteLine(total != 0 ? "done" : "?");
    }
}
