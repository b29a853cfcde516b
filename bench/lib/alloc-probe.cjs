// Preloaded with `NODE_OPTIONS=--require …/alloc-probe.cjs`: samples every allocation of the main thread's JavaScript
// heap from preload to exit with V8's sampling heap profiler (objects the garbage collector has already collected
// included, so it counts what was allocated, not what is live) and writes the estimated bytes to BENCH_ALLOC_FILE. On
// a VM where a fresh page costs 10 us, the bytes a start allocates set much of its time, and unlike wall time they do
// not move with the machine's load. The probe's own allocations are left out. The variable is removed at load so
// child processes (which inherit NODE_OPTIONS) never overwrite the figure.
const { writeFileSync } = require('node:fs');
const { isMainThread } = require('node:worker_threads');

const file = process.env.BENCH_ALLOC_FILE;
delete process.env.BENCH_ALLOC_FILE;
if (file && isMainThread) {
  const { Session } = require('node:inspector');
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 1024,
    includeObjectsCollectedByMinorGC: true,
    includeObjectsCollectedByMajorGC: true,
  });
  process.on('exit', () => {
    // An in-process session answers synchronously.
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (error) return;
      const { head, samples } = result.profile;
      // The nodes whose stack passes through this file: the probe's own work.
      const own = new Set();
      const walk = (node, inProbe) => {
        const probe = inProbe || node.callFrame.url.endsWith('alloc-probe.cjs');
        if (probe) own.add(node.id);
        for (const child of node.children) walk(child, probe);
      };
      walk(head, false);
      let bytes = 0;
      for (const sample of samples) if (!own.has(sample.nodeId)) bytes += sample.size;
      writeFileSync(file, String(bytes));
    });
  });
}
