// Preloaded with `NODE_OPTIONS=--require …/rss-probe.cjs`: on exit, writes this process's peak RSS (KiB), the CPU
// time it used since it started (user + system, all its threads, in ms) and its minor page faults (each page of fresh
// memory it touched) to the file named by BENCH_RSS_FILE. The variable is removed at load so child node processes (which inherit NODE_OPTIONS) and
// worker threads never overwrite the parent's figure.
const { writeFileSync } = require('node:fs');
const { isMainThread } = require('node:worker_threads');

const file = process.env.BENCH_RSS_FILE;
delete process.env.BENCH_RSS_FILE;
if (file && isMainThread) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(file, `${usage.maxRSS} ${(usage.userCPUTime + usage.systemCPUTime) / 1000} ${usage.minorPageFault}`);
  });
}
