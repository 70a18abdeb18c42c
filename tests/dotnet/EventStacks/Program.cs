// A .NET app whose allocations, lock waits and exceptions are split 2:1
// between two methods each, for the tests of the runtime events' profiles:
//   eventstacks TRIGGER ROUNDS [spin]   prints "ready", waits until the
//       file TRIGGER exists, then runs ROUNDS rounds of:
//       - AllocateA allocating twice the bytes AllocateB allocates;
//       - WaitOnA (two threads) and WaitOnB (one thread) each waiting about
//         as long for a lock the holder thread holds: twice the time on
//         LockA;
//       - then the same threads in WaitForA and WaitForB, waiting as long for
//         an event the holder thread sets (WaitHandle.WaitOne);
//       - ThrowA throwing twice as many Demo.KnownException as ThrowB;
//       all but the waits on the holder thread (not the main one, whose
//       thread id is the process's). Then prints "exceptions N" (the
//       exceptions caught), "allocated-a N" and "allocated-b N" (the bytes
//       each allocated), "holder-tid N" and "holder-managed-id N" (the
//       holder's OS and managed thread ids) and "done", and idles until
//       killed. With "spin", a thread of its own spins in Spin a quarter of
//       the time from the trigger on, so that each second of the app has
//       CPU samples.
using System;
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
    private const int HoldMilliseconds = 20;
    private static readonly object LockA = new();
    private static readonly object LockB = new();
    private static readonly ManualResetEvent EventA = new(false);
    private static readonly ManualResetEvent EventB = new(false);
    private static long sink;
    // Where the arrays go, so that they escape: .NET 10 allocates arrays
    // that do not on the stack, which the GC never sees.
    private static readonly byte[][] Kept = new byte[16][];

    // The calling thread's OS thread id: the first field of its stat file
    // (no P/Invoke, so in any container with /proc).
    private static string OsThreadId() => File.ReadAllText("/proc/thread-self/stat").Split(' ')[0];

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void AllocateA()
    {
        for (int i = 0; i < 2000; i++)
            Kept[i & 15] = new byte[1000];
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void AllocateB()
    {
        for (int i = 0; i < 1000; i++)
            Kept[i & 15] = new byte[1000];
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void WaitOnA()
    {
        lock (LockA)
            sink++;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void WaitOnB()
    {
        lock (LockB)
            sink++;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void WaitForA() => EventA.WaitOne();

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void WaitForB() => EventB.WaitOne();

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowA(int number) => throw new KnownException(number);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowB(int number) => throw new KnownException(number);

    private static int Throw(int count, Action<int> thrower)
    {
        int caught = 0;
        for (int i = 0; i < count; i++)
        {
            try { thrower(i); }
            catch (KnownException) { caught++; }
        }
        return caught;
    }

    // Each round the holder thread holds both locks while the waiters line up
    // behind them, then lets them go, then does the same with both events:
    // each waiter waits about HoldMilliseconds for each.
    private static Thread Waiter(Barrier barrier, int rounds, Action lockWait, Action eventWait)
    {
        var thread = new Thread(() =>
        {
            for (int round = 0; round < rounds; round++)
            {
                barrier.SignalAndWait();
                lockWait();
                barrier.SignalAndWait();
                eventWait();
                barrier.SignalAndWait();
            }
        });
        thread.Start();
        return thread;
    }

    // A quarter of a core: 5 ms on the CPU, 15 ms asleep.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Spin()
    {
        var clock = new System.Diagnostics.Stopwatch();
        while (true)
        {
            clock.Restart();
            while (clock.ElapsedMilliseconds < 5)
                sink++;
            Thread.Sleep(15);
        }
    }

    private static int caught;
    private static long allocatedA, allocatedB;

    private static void HoldAndWork(int rounds)
    {
        using var barrier = new Barrier(4);
        var waiters = new[] {
            Waiter(barrier, rounds, WaitOnA, WaitForA), Waiter(barrier, rounds, WaitOnA, WaitForA),
            Waiter(barrier, rounds, WaitOnB, WaitForB)
        };
        for (int round = 0; round < rounds; round++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            AllocateA();
            long between = GC.GetAllocatedBytesForCurrentThread();
            AllocateB();
            allocatedA += between - before;
            allocatedB += GC.GetAllocatedBytesForCurrentThread() - between;
            caught += Throw(2, ThrowA);
            caught += Throw(1, ThrowB);
            Monitor.Enter(LockA);
            Monitor.Enter(LockB);
            EventA.Reset();
            EventB.Reset();
            barrier.SignalAndWait();
            Thread.Sleep(HoldMilliseconds);
            Monitor.Exit(LockB);
            Monitor.Exit(LockA);
            barrier.SignalAndWait();
            Thread.Sleep(HoldMilliseconds);
            EventA.Set();
            EventB.Set();
            barrier.SignalAndWait();
        }
        foreach (var waiter in waiters)
            waiter.Join();
        Console.WriteLine($"holder-tid {OsThreadId()}");
        Console.WriteLine($"holder-managed-id {Environment.CurrentManagedThreadId}");
    }

    public static int Main(string[] args)
    {
        if (args.Length != 2 && !(args.Length == 3 && args[2] == "spin"))
        {
            Console.Error.WriteLine("usage: eventstacks TRIGGER ROUNDS [spin]");
            return 2;
        }
        Console.WriteLine("ready");
        while (!File.Exists(args[0]))
            Thread.Sleep(50);
        int rounds = int.Parse(args[1]);
        if (args.Length == 3)
            new Thread(Spin) { IsBackground = true }.Start();
        var holder = new Thread(() => HoldAndWork(rounds));
        holder.Start();
        holder.Join();
        Console.WriteLine($"exceptions {caught}");
        Console.WriteLine($"allocated-a {allocatedA}");
        Console.WriteLine($"allocated-b {allocatedB}");
        Console.WriteLine("done");
        Thread.Sleep(Timeout.Infinite);
        return 0;
    }
}
