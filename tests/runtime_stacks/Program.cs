// Usage: RuntimeStacks FILE.nettrace
// Prints the managed stacks of the runtime's own sampler
// (Microsoft-DotNETCore-SampleProfiler events, each with the stack the
// runtime walked itself), resolved by TraceEvent's TraceLog with the
// rundown's method names: one line per unique stack, outermost frame
// first, frames separated by ';', then a tab and the count.
using System;
using System.Collections.Generic;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;

if (args.Length != 1)
{
    Console.Error.WriteLine("usage: RuntimeStacks FILE.nettrace");
    return 2;
}
using var log = new TraceLog(TraceLog.CreateFromEventPipeDataFile(args[0]));
var counts = new Dictionary<string, long>(StringComparer.Ordinal);
foreach (var sample in log.Events)
{
    if (sample.ProviderName != "Microsoft-DotNETCore-SampleProfiler")
        continue;
    var frames = new List<string>();
    for (var frame = sample.CallStack(); frame != null; frame = frame.Caller)
        frames.Add(frame.CodeAddress.FullMethodName ?? "?");
    frames.Reverse();
    var stack = string.Join(";", frames);
    counts[stack] = counts.GetValueOrDefault(stack) + 1;
}
foreach (var (stack, count) in counts)
    Console.WriteLine($"{stack}\t{count}");
return counts.Count > 0 ? 0 : 1;
