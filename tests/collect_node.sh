#!/usr/bin/env bash
# node --perf-basic-prof, a real JIT that writes /tmp/perf-<pid>.map: its
# JavaScript functions are named in the profile.
source "$(dirname "$0")/lib.sh"

command -v node >/dev/null || skip "node is not installed"
cat >"$workdir/hot.js" <<'JS'
function hotLoop(n) {
  let sum = 0;
  for (let i = 1; i < n; i++) sum += Math.sqrt(i) / i;
  return sum;
}
const end = Date.now() + 60000;
let total = 0;
console.log("ready");
while (Date.now() < end) total += hotLoop(1e6);
console.log(total);
JS
cd "$workdir" # node may leave a v8 log in its working folder
start node --perf-basic-prof "$workdir/hot.js" >"$workdir/node.out"
pid=$started_pid
until grep -q ready "$workdir/node.out"; do sleep 0.05; done
sleep 0.5
"$PROFCPU" collect -pid "$pid" -duration 3 -o "$workdir/out"
rm -f "/tmp/perf-$pid.map"

folded top "$workdir/out/folded_stacks.out" 5
assert_share "$workdir/out/folded_stacks.out" '(JS|LazyCompile):[*~^]?hotLoop ' 70 100
