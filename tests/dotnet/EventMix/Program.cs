// A .NET app whose runtime events are known, for the EventPipe tests:
//   eventmix TRIGGER EXCEPTIONS   prints "ready", waits until the file
//       TRIGGER exists, then allocates (forcing GCs, two of them induced
//       gen2), throws and catches EXCEPTIONS Demo.KnownException, makes four
//       threads contend on one lock in Demo.Program::ContendedSection, and
//       prints what it did: "gc0 N", "gc1 N", "gc2 N" (GC.CollectionCount
//       deltas: gcN counts collections of generation N or older),
//       "exceptions N", then "done"; then it idles until killed.
//   eventmix bench ROUNDS TRIGGER  prints "ready", waits for TRIGGER, then
//       allocates ROUNDS rounds and prints "cpu SECONDS gcs N", the CPU
//       time of the whole process over them and the GCs they made: the
//       workload of scripts/bench-events.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Demo;

public sealed class KnownException : Exception
{
    public KnownException(int number) : base($"known exception {number}") { }
}

public static class Program
{
    private static readonly object Gate = new();
    private static long sink;

    // Short-lived garbage with a small survivor set: gen0 collections, a few
    // gen1 ones as the survivors age.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Allocate(int rounds)
    {
        var survivors = new List<byte[]>();
        for (int round = 0; round < rounds; round++)
        {
            for (int i = 0; i < 1000; i++)
            {
                var garbage = new byte[1024 + (i % 7) * 128];
                garbage[0] = (byte)i;
                sink += garbage.Length;
            }
            survivors.Add(new byte[256]);
            if (survivors.Count > 2000)
                survivors.Clear();
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Throw(int number) => throw new KnownException(number);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int ThrowAndCatch(int count)
    {
        int caught = 0;
        for (int i = 0; i < count; i++)
        {
            try { Throw(i); }
            catch (KnownException) { caught++; }
        }
        return caught;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ContendedSection()
    {
        lock (Gate)
        {
            Thread.Sleep(2);
            sink++;
        }
    }

    private static void Contend()
    {
        var threads = new Thread[4];
        for (int t = 0; t < threads.Length; t++)
        {
            threads[t] = new Thread(() => { for (int i = 0; i < 50; i++) ContendedSection(); });
            threads[t].Start();
        }
        foreach (var thread in threads)
            thread.Join();
    }

    // CPU time (user + system, clock ticks) of each of this process's
    // threads by its task id, with its name (spaces made underscores), from
    // /proc/self/task.
    private static Dictionary<string, (string Name, long Ticks)> ThreadTicks()
    {
        var threads = new Dictionary<string, (string, long)>();
        foreach (string task in Directory.GetDirectories("/proc/self/task"))
        {
            try
            {
                string name = File.ReadAllText(task + "/comm").Trim().Replace(' ', '_');
                string stat = File.ReadAllText(task + "/stat");
                string[] fields = stat.Substring(stat.LastIndexOf(')') + 2).Split(' ');
                threads[Path.GetFileName(task)] = (name, long.Parse(fields[11]) + long.Parse(fields[12]));
            }
            catch (IOException)
            {
                // the thread ended meanwhile
            }
        }
        return threads;
    }

    private static void WaitFor(string trigger)
    {
        Console.WriteLine("ready");
        while (!File.Exists(trigger))
            Thread.Sleep(50);
    }

    public static int Main(string[] args)
    {
        if (args.Length == 3 && args[0] == "bench")
        {
            WaitFor(args[2]);
            var start = Process.GetCurrentProcess().TotalProcessorTime;
            var threadsBefore = ThreadTicks();
            int gcs = GC.CollectionCount(0);
            Allocate(int.Parse(args[1]));
            var used = Process.GetCurrentProcess().TotalProcessorTime - start;
            Console.WriteLine($"cpu {used.TotalSeconds:F3} gcs {GC.CollectionCount(0) - gcs}");
            var byName = new Dictionary<string, long>();
            foreach (var (task, (name, ticks)) in ThreadTicks())
            {
                long earlier = threadsBefore.TryGetValue(task, out var thread) ? thread.Ticks : 0;
                byName[name] = byName.GetValueOrDefault(name) + ticks - earlier;
            }
            foreach (var (name, ticks) in byName)
                Console.WriteLine($"thread {name} {ticks}");
            return 0;
        }
        if (args.Length != 2)
        {
            Console.Error.WriteLine("usage: eventmix TRIGGER EXCEPTIONS | eventmix bench ROUNDS TRIGGER");
            return 2;
        }
        WaitFor(args[0]);
        var before = new int[3];
        for (int g = 0; g < 3; g++)
            before[g] = GC.CollectionCount(g);
        Allocate(4000);
        GC.Collect(2, GCCollectionMode.Forced, blocking: true);
        Allocate(1000);
        GC.Collect(2, GCCollectionMode.Forced, blocking: true);
        int caught = ThrowAndCatch(int.Parse(args[1]));
        Contend();
        for (int g = 0; g < 3; g++)
            Console.WriteLine($"gc{g} {GC.CollectionCount(g) - before[g]}");
        Console.WriteLine($"exceptions {caught}");
        Console.WriteLine("done");
        Thread.Sleep(Timeout.Infinite);
        return 0;
    }
}
