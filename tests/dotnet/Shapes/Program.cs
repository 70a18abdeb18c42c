// The app of the shapes test (tests/dotnet_shapes.sh): its time goes to two
// methods of its own, Heavy doing twice the work of Light, and a little to
// the framework's precompiled code (Array.Sort of a few ints, then
// Array.Copy). Usage: shapes SECONDS; prints "ready" once it runs.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Demo;

public static class Program
{
    private const int Unit = 200_000; // loop iterations in one unit of work
    private static volatile int sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Heavy()
    {
        for (int i = 0; i < 2 * Unit; i++) sink += i;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Light()
    {
        for (int i = 0; i < Unit; i++) sink += i;
    }

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
        int[] source = new int[2_000], scratch = new int[2_000];
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
