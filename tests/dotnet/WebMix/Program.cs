// A small ASP.NET Core service with the kinds of work a real one does, each
// on its own route: JSON, regex, LINQ, SHA256 (OpenSSL's libcrypto), gzip
// (zlib), async with allocations, a CPU-bound route and two that block for
// 100 ms in Task.Delay(100).Wait() (/block, and /blockb in another method).
//
//   webmix URL [SECONDS [ROUTES]]
//
// listens on URL (loopback only), and with SECONDS > 0 also loads itself:
// one client task per core asks the routes named in ROUTES (comma-separated,
// default "json,regex,linq,sha256,gzip,async") in turn, for SECONDS seconds,
// then exits. Prints "ready" once it answers requests, and at the end one
// line "ROUTE COUNT" per route.
using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using System.IO.Compression;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;

string url = args.Length > 0 ? args[0] : "http://127.0.0.1:5080";
double seconds = args.Length > 1 ? double.Parse(args[1]) : 0;
string[] routes = (args.Length > 2 ? args[2] : "json,regex,linq,sha256,gzip,async").Split(',');

var builder = WebApplication.CreateBuilder();
builder.Logging.ClearProviders();
builder.WebHost.UseUrls(url);
var app = builder.Build();

var orders = Enumerable.Range(0, 2_000)
    .Select(i => new Order(i, $"customer-{i % 97}", i * 1.25m, i % 5 == 0))
    .ToArray();
var emailPattern = new Regex(@"^[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}$", RegexOptions.Compiled);
string[] emails = Enumerable.Range(0, 500).Select(i => i % 3 == 0 ? $"user{i}@example.org" : $"not-an-email-{i}").ToArray();
byte[] payload = Encoding.UTF8.GetBytes(string.Concat(Enumerable.Repeat("profcpu sample payload ", 4_000)));

app.MapGet("/json", () => Results.Text(JsonSerializer.Serialize(orders[..400]), "application/json"));
app.MapGet("/regex", () => emails.Count(e => emailPattern.IsMatch(e)).ToString());
app.MapGet("/linq", () => orders.Where(o => o.Paid).GroupBy(o => o.Customer)
    .Select(g => new { g.Key, Total = g.Sum(o => o.Amount) }).OrderByDescending(g => g.Total).First().Key);
app.MapGet("/sha256", () => {
    byte[] hash = payload;
    for (int i = 0; i < 20; i++)
        hash = SHA256.HashData(payload);
    return Convert.ToHexString(hash);
});
app.MapGet("/gzip", () => {
    using var output = new MemoryStream();
    using (var gzip = new GZipStream(output, CompressionLevel.Optimal, leaveOpen: true))
        gzip.Write(payload);
    return output.Length.ToString();
});
app.MapGet("/async", async () => {
    var parts = new List<string>();
    for (int i = 0; i < 50; i++) {
        await Task.Yield();
        parts.Add(new string('x', 200 + i));
    }
    return parts.Sum(p => p.Length).ToString();
});
app.MapGet("/cpu", Routes.Cpu);
app.MapGet("/block", Routes.Block);
app.MapGet("/blockb", Routes.BlockB);

await app.StartAsync();
Console.WriteLine("ready");
if (seconds > 0) {
    var counts = new ConcurrentDictionary<string, int>();
    using var client = new HttpClient { BaseAddress = new Uri(url) };
    var until = DateTime.UtcNow.AddSeconds(seconds);
    var clients = Enumerable.Range(0, Environment.ProcessorCount).Select(async n => {
        for (int i = n; DateTime.UtcNow < until; i++) {
            string route = routes[i % routes.Length];
            (await client.GetAsync("/" + route)).EnsureSuccessStatusCode();
            counts.AddOrUpdate(route, 1, (_, c) => c + 1);
        }
    });
    await Task.WhenAll(clients);
    foreach (var (route, count) in counts.OrderBy(p => p.Key))
        Console.WriteLine($"{route} {count}");
    await app.StopAsync();
} else {
    await app.WaitForShutdownAsync();
}

record Order(int Id, string Customer, decimal Amount, bool Paid);

// The CPU-bound and blocking routes, named so that their frames tell them
// apart in stacks (lambdas get compiler names).
static class Routes {
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static string Cpu() {
        double sum = 0;
        for (int i = 1; i < 3_000_000; i++)
            sum += Math.Sqrt(i);
        return sum.ToString("F0");
    }

    // Blocks a thread-pool thread for 100 ms, as sync-over-async code does.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static string Block() {
        Task.Delay(100).Wait();
        return "slept";
    }

    // The same wait under another name, for a second blocking route.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static string BlockB() {
        Task.Delay(100).Wait();
        return "slept";
    }
}
