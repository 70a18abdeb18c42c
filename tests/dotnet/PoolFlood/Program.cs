// A .NET app that floods its thread pool at a known moment, for the
// flight recorder's --threadpool-queue rule:
//   poolflood TRIGGER ITEMS   prints "ready", idles (its thread pool's
//       queue empty) until the file TRIGGER exists, then queues ITEMS work
//       items that each block 5 ms, prints "queued N" (the pool's pending
//       items right after: what the runtime's threadpool-queue-length
//       counter reads), and once all ran prints "done" and idles until
//       killed.
using System;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Demo;

public static class Program
{
    private static int left;
    private static readonly ManualResetEventSlim AllRan = new(false);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void BlockBriefly(object? state)
    {
        Thread.Sleep(5);
        if (Interlocked.Decrement(ref left) == 0)
            AllRan.Set();
    }

    public static void Main(string[] args)
    {
        string trigger = args[0];
        int items = int.Parse(args[1]);

        Console.WriteLine("ready");
        while (!File.Exists(trigger))
            Thread.Sleep(50);
        left = items;
        for (int i = 0; i < items; i++)
            ThreadPool.QueueUserWorkItem(BlockBriefly);
        Console.WriteLine($"queued {ThreadPool.PendingWorkItemCount}");
        AllRan.Wait();
        Console.WriteLine("done");
        Thread.Sleep(Timeout.Infinite);
    }
}
