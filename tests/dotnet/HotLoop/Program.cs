// A .NET workload whose time goes to one managed method, two calls below
// Main: the profile must name Demo.Program::HotMethod and reach Main.
// Caller is kept unoptimized: optimized code may omit the frame pointer in
// small methods, and a frame-pointer unwinder (perf's, profcpu's) then skips
// the frame above them.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Demo;

public static class Program
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static double HotMethod(int iterations)
    {
        double sum = 0;
        for (int i = 1; i < iterations; i++)
            sum += Math.Sqrt(i) / i;
        return sum;
    }

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.NoOptimization)]
    private static double Caller() => HotMethod(2_000_000);

    public static void Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0]) : 30;
        var clock = Stopwatch.StartNew();
        double total = 0;
        Console.WriteLine("ready");
        while (clock.Elapsed.TotalSeconds < seconds)
            total += Caller();
        Console.WriteLine(total > 0 ? "done" : "?");
    }
}
