// Usage: TraceEventCheck [--threadtime|--parallel] NAME.trace.zip REGEX
// Loads the trace as PerfView's views do (LinuxPerfScriptStackSource), or
// with --parallel as PerfView's /PerfScript command line does
// (ParallelLinuxPerfScriptStackSource, four threads over blocks of the
// text), and prints
//   samples N
//   share P        % of samples with a frame whose name matches REGEX
//   leaf P         % of samples whose leaf frame matches REGEX
//   frame NAME     every distinct frame name matching REGEX
// then the five heaviest leaf frames. With --threadtime it loads the trace
// as PerfView's Thread Time view does (threadTime true) and also prints
//   blocked_samples N     events TraceEvent put under a BLOCKED_TIME frame
//   blocked_matching N    of those, the ones with a frame matching REGEX
//   total_blocked_ms X    the blocked time TraceEvent computed
//   blocked_matching_share P  % of the thread time (the samples' metric)
//                         blocked with a frame matching REGEX
//   metric_total X        the thread time of all samples
using System;
using System.Collections.Generic;
using System.Linq;
using System.Text.RegularExpressions;
using Microsoft.Diagnostics.Tracing.StackSources;
using Microsoft.Diagnostics.Tracing.Stacks;

bool threadTime = args.Length == 3 && args[0] == "--threadtime";
bool parallel = args.Length == 3 && args[0] == "--parallel";
if (threadTime || parallel) args = args[1..];
if (args.Length != 2)
{
    Console.Error.WriteLine("usage: TraceEventCheck [--threadtime|--parallel] NAME.trace.zip REGEX");
    return 2;
}
var pattern = new Regex(args[1]);
LinuxPerfScriptStackSource source = parallel
    ? new ParallelLinuxPerfScriptStackSource(args[0], false)
    : new LinuxPerfScriptStackSource(args[0], threadTime);
int samples = 0, matched = 0, leafMatched = 0, blocked = 0, blockedMatching = 0;
double metricTotal = 0, blockedMatchingMetric = 0;
var leaves = new Dictionary<string, int>();
var matchingFrames = new SortedSet<string>(StringComparer.Ordinal);

source.ForEach(sample =>
{
    samples++;
    bool any = false, isBlocked = false;
    string? leaf = null;
    for (var stack = sample.StackIndex; stack != StackSourceCallStackIndex.Invalid;
         stack = source.GetCallerIndex(stack))
    {
        string name = source.GetFrameName(source.GetFrameIndex(stack), false);
        leaf ??= name;
        if (name == "BLOCKED_TIME") isBlocked = true;
        if (pattern.IsMatch(name))
        {
            any = true;
            matchingFrames.Add(name);
        }
    }
    if (any) matched++;
    if (isBlocked) blocked++;
    if (isBlocked && any) blockedMatching++;
    metricTotal += sample.Metric;
    if (isBlocked && any) blockedMatchingMetric += sample.Metric;
    if (leaf != null)
    {
        leaves[leaf] = leaves.GetValueOrDefault(leaf) + 1;
        if (pattern.IsMatch(leaf)) leafMatched++;
    }
});

double Percent(int part) => samples == 0 ? 0 : 100.0 * part / samples;
Console.WriteLine($"samples {samples}");
Console.WriteLine($"share {Percent(matched):F1}");
Console.WriteLine($"leaf {Percent(leafMatched):F1}");
foreach (var name in matchingFrames) Console.WriteLine($"frame {name}");
if (threadTime)
{
    Console.WriteLine($"blocked_samples {blocked}");
    Console.WriteLine($"blocked_matching {blockedMatching}");
    Console.WriteLine($"total_blocked_ms {source.TotalBlockedTime:F1}");
    Console.WriteLine($"blocked_matching_share {(metricTotal == 0 ? 0 : 100 * blockedMatchingMetric / metricTotal):F1}");
    Console.WriteLine($"metric_total {metricTotal:F1}");
}
foreach (var (name, count) in leaves.OrderByDescending(pair => pair.Value).Take(5))
    Console.WriteLine($"top {Percent(count):F1}% {name}");
return 0;
