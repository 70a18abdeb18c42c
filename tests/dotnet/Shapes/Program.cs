// The app of the shapes test (tests/dotnet_shapes.sh): its time goes to two
// methods of its own, Heavy doing twice the work of Light (in Work, which
// both call), and a little to
// the framework's precompiled code (Array.Sort of a few ints, then
// Array.Copy). Usage: shapes SECONDS; prints "ready" once it runs.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Demo;

public static class Program
{
    // Loop iterations in one unit of work: a round (three units) takes tens of
    // ms, many sampling periods, so that samples fall all over it instead of
    // at the same few points of a round as short as the period.
    private const int Unit = 5_000_000;
    private static volatile int sink;

    // Both run the same machine code, so their time follows their work
    // however each shape compiles it (two loops of their own may not).
    // A chain of multiplications in registers: each step waits for the one
    // before, so its time does not depend on memory (a loop adding to a
    // static field took 10% longer a step in Heavy, run after the sort).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int Work(int iterations)
    {
        int x = 0;
        for (int i = 0; i < iterations; i++) x = x * 31 + i;
        return x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Heavy() => sink += Work(2 * Unit);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Light() => sink += Work(Unit);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Framework(int[] source, int[] scratch)
    {
        Array.Copy(source, scratch, source.Length);
        Array.Sort(scratch);
    }

    public static void Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0]) : 30;
        var random = new Random(42);
        int[] source = new int[20_000], scratch = new int[20_000];
        for (int i = 0; i < source.Length; i++)
            source[i] = random.Next();
        var clock = Stopwatch.StartNew();
        Console.WriteLine("ready");
        while (clock.Elapsed.TotalSeconds < seconds)
        {
            Heavy();
            Light();
            Framework(source, scratch);
        }
        Console.WriteLine("done");
    }
}
