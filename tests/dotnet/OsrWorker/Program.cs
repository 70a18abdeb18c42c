// Loops that run in on-stack-replaced code for the whole run: Worker is
// called once on each of two threads and loops until the time is up, so it
// starts as quick-JIT code, moves to its OSR code ([OptimizedTier1OSR]) at
// its loop within milliseconds, and is never called again to be rejitted.
// Its callers keep their frames (NoOptimization): a missing frame is the
// unwinding of Worker's. Worker calls Step each turn of its outer loop.
//   main thread:  Main -> MainOuter -> Worker
//   "osr-thread": ThreadRoot (its ThreadStart) -> ThreadOuter -> Worker
// Usage: osrworker SECONDS: prints "ready" once both loops run.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Demo;

public static class Program
{
    private static volatile bool stop;
    private static int running;
    private static double sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static double Worker()
    {
        Interlocked.Increment(ref running);
        double sum = 0;
        while (!stop)
        {
            for (int i = 1; i < 100_000; i++)
                sum += Math.Sqrt(i) / i;
            sum += Step(sum);
        }
        return sum;
    }

    // Called from Worker's OSR code: a third of the time is spent below
    // it, its frame a caller's.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static double Step(double sum)
    {
        double step = 0;
        for (int i = 1; i < 50_000; i++)
            step += Math.Sqrt(i + sum) / i;
        return step * 1e-9;
    }

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.NoOptimization)]
    private static double MainOuter() => Worker();

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.NoOptimization)]
    private static double ThreadOuter() => Worker();

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThreadRoot() => sink += ThreadOuter();

    public static void Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0]) : 30;
        var thread = new Thread(ThreadRoot) { Name = "osr-thread" };
        thread.Start();
        using var timer = new Timer(_ => stop = true, null, TimeSpan.FromSeconds(seconds),
                                    Timeout.InfiniteTimeSpan);
        new Thread(() =>
        {
            while (Volatile.Read(ref running) < 2)
                Thread.Sleep(10);
            Console.WriteLine("ready");
        }).Start();
        sink += MainOuter();
        thread.Join();
        Console.WriteLine(sink > 0 ? "done" : "?");
    }
}
