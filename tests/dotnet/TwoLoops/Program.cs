// Two loops on their own lines in one method, the first doing twice the
// work of the second: two thirds of the time on one line, a third on the
// other (source_lines_dotnet.sh reads the lines from twoloops.pdb).
// Usage: twoloops SECONDS [GO_FILE]: prints "ready", waits until GO_FILE
// exists (a profiler is attached: the method's first tiers, quick and
// on-stack-replaced code, are sampled too), then works for SECONDS.
using System;
using System.Diagnostics;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Demo;

public static class Program
{
    private const int Unit = 100_000; // loop iterations in one unit of work
    private static volatile int sink;

    // Each loop whole on one line, so all of its time is on that line.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void TwoLoops()
    {
        for (int i = 0; i < 2 * Unit; i++) sink += i; // TWO THIRDS
        for (int i = 0; i < Unit; i++) sink += i; // ONE THIRD
    }

    public static void Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0]) : 30;
        Console.WriteLine("ready");
        while (args.Length > 1 && !File.Exists(args[1]))
            Thread.Sleep(10);
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed.TotalSeconds < seconds)
            TwoLoops();
        Console.WriteLine("done");
    }
}
