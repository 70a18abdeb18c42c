// Usage: NettraceCheck FILE.nettrace
// Reads the file with TraceEvent's EventPipeEventSource and prints
//   events N           every event
//   gc N, gcG N        GCStart events, all and by generation (condemned)
//   exception TYPE N   ExceptionThrown events by type
//   contentions N      ContentionStart events
//   jitted N           MethodLoadVerbose events of the runtime provider
//   rundown N          events of the rundown provider
//   other-runtime N    runtime-provider events outside the GC keyword
//   provider NAME N    events per provider
//   stacked KIND N M   of the M events of KIND (alloc: GC/AllocationTick,
//                      contention: Contention/Start, exception:
//                      Exception/Start), N have a stack in TraceLog, the
//                      model PerfView's views are built on
//   site KIND METHOD N events of KIND whose stack passes through METHOD,
//                      the first Demo.* frame from the leaf (Demo.Type.Method)
//   pause-total MS, pause-max MS   GC pauses as TraceEvent's GC analysis
//                      (the one PerfView's GCStats uses) computes them
using System;
using System.Collections.Generic;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Analysis;
using Microsoft.Diagnostics.Tracing.Etlx;
using TraceLog = Microsoft.Diagnostics.Tracing.Etlx.TraceLog;

if (args.Length != 1)
{
    Console.Error.WriteLine("usage: NettraceCheck FILE.nettrace");
    return 2;
}
const string Runtime = "Microsoft-Windows-DotNETRuntime";
// TraceEvent names the rundown provider by its GUID.
var rundownProvider = new Guid("a669021c-c450-4609-a035-5af59af4df18");
const ulong GcKeyword = 0x1;
long events = 0, contentions = 0, jitted = 0, rundown = 0, otherRuntime = 0;
var gcs = new long[3];
var exceptions = new SortedDictionary<string, long>(StringComparer.Ordinal);
var providers = new SortedDictionary<string, long>(StringComparer.Ordinal);

using var source = new EventPipeEventSource(args[0]);
source.Clr.GCStart += data => { if (data.Depth < 3) gcs[data.Depth]++; };
source.Clr.ExceptionStart += data =>
    exceptions[data.ExceptionType] = exceptions.GetValueOrDefault(data.ExceptionType) + 1;
source.Clr.ContentionStart += data => contentions++;
source.Clr.MethodLoadVerbose += data => jitted++;
source.AllEvents += data =>
{
    events++;
    providers[data.ProviderName] = providers.GetValueOrDefault(data.ProviderName) + 1;
    if (data.ProviderGuid == rundownProvider)
        rundown++;
    else if (data.ProviderName == Runtime && ((ulong)data.Keywords & GcKeyword) == 0)
        otherRuntime++;
};
source.NeedLoadedDotNetRuntimes();
source.Process();
double pauseTotal = 0, pauseMax = 0;
foreach (var process in source.Processes())
{
    var runtime = process.LoadedDotNetRuntime();
    if (runtime == null)
        continue;
    foreach (var gc in runtime.GC.GCs)
    {
        pauseTotal += gc.PauseDurationMSec;
        pauseMax = Math.Max(pauseMax, gc.PauseDurationMSec);
    }
}

Console.WriteLine($"events {events}");
Console.WriteLine($"gc {gcs[0] + gcs[1] + gcs[2]}");
for (int g = 0; g < 3; g++)
    Console.WriteLine($"gc{g} {gcs[g]}");
foreach (var (type, count) in exceptions)
    Console.WriteLine($"exception {type} {count}");
Console.WriteLine($"contentions {contentions}");
Console.WriteLine($"jitted {jitted}");
Console.WriteLine($"rundown {rundown}");
Console.WriteLine($"other-runtime {otherRuntime}");
Console.WriteLine($"pause-total {pauseTotal:F1}");
Console.WriteLine($"pause-max {pauseMax:F1}");
foreach (var (name, count) in providers)
    Console.WriteLine($"provider {name} {count}");

var kinds = new Dictionary<string, string>
{
    ["GC/AllocationTick"] = "alloc",
    ["Contention/Start"] = "contention",
    ["Exception/Start"] = "exception",
};
var stacked = new SortedDictionary<string, (long WithStack, long All)>(StringComparer.Ordinal);
var sites = new SortedDictionary<string, long>(StringComparer.Ordinal);
using (var log = new TraceLog(TraceLog.CreateFromEventPipeDataFile(args[0])))
{
    foreach (var data in log.Events)
    {
        if (data.ProviderName != Runtime || !kinds.TryGetValue(data.EventName, out var kind))
            continue;
        var stack = data.CallStack();
        var (withStack, all) = stacked.GetValueOrDefault(kind);
        stacked[kind] = (withStack + (stack != null ? 1 : 0), all + 1);
        for (; stack != null; stack = stack.Caller)
        {
            string method = stack.CodeAddress.FullMethodName;
            if (method.StartsWith("Demo.", StringComparison.Ordinal))
            {
                string key = $"{kind} {method.Split('(')[0]}";
                sites[key] = sites.GetValueOrDefault(key) + 1;
                break;
            }
        }
    }
}
foreach (var (kind, (withStack, all)) in stacked)
    Console.WriteLine($"stacked {kind} {withStack} {all}");
foreach (var (site, count) in sites)
    Console.WriteLine($"site {site} {count}");
return 0;
