// Two loops on their own lines in one method, the first doing twice the
// work of the second, published ReadyToRun (source_lines_r2r.sh): two
// thirds of the time on one line of precompiled code, a third on the other.
// Each iteration waits on a division (a divisor the compiler cannot fold),
// so both loops cost the same per iteration wherever their code is placed:
// with TwoLoops' loops (tests/dotnet/TwoLoops), precompiled, an iteration
// of the second took 1.8 times as long as one of the first on this machine
// (its code crossed a 64-byte boundary), and the lines split 53/47.
// Usage: r2rtwoloops SECONDS: prints "ready", then works for SECONDS.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Demo;

public static class Program
{
    private const int Unit = 20_000; // loop iterations in one unit of work
    private static volatile int sink;
    private static int divisor = 3;

    // Each loop whole on one line, so all of its time is on that line.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void TwoLoops()
    {
        for (int i = 0; i < 2 * Unit; i++) sink = sink / divisor + i; // TWO THIRDS
        for (int i = 0; i < Unit; i++) sink = sink / divisor + i; // ONE THIRD
    }

    public static void Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0]) : 30;
        Console.WriteLine("ready");
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed.TotalSeconds < seconds)
            TwoLoops();
        Console.WriteLine("done");
    }
}
