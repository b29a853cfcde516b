/**
 * Spike (issue 8): the cost of one streaming update in Ink 6 with a 10-item and a 5,000-item
 * transcript above it, rendered to an in-memory 120x40 stdout. Not part of `npm run bench`
 * (Ink is not a dependency): run it from a folder where `npm i --no-save ink@6.8.0 react@19.3.1`
 * was done, e.g. `cd /tmp/inkspike && node /path/to/bench/spikes/ink-frame.mjs`.
 * The figure to compare is bench/tui-figures.mjs "in-process frame while streaming".
 */
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';

const require = createRequire(`${process.cwd()}/`);
const React = require('react');
const { render, Box, Text } = await import(require.resolve('ink'));

class FakeStdout extends EventEmitter {
  columns = 120;
  rows = 40;
  isTTY = true;
  bytes = 0;
  write(chunk) {
    this.bytes += chunk.length;
    return true;
  }
}

function App({ items, streaming }) {
  return React.createElement(
    Box,
    { flexDirection: 'column' },
    ...items.map((t, i) => React.createElement(Text, { key: i }, t)),
    React.createElement(Text, { key: 'live' }, streaming),
  );
}

async function measure(count, updates = 200, windowed = false) {
  const all = Array.from({ length: count }, (_, i) => `message ${i}: some earlier transcript text that fills a line`);
  // Windowed: only the rows that fit the screen are in the tree, as our renderer does.
  const items = windowed ? all.slice(-38) : all;
  const stdout = new FakeStdout();
  let streaming = '';
  const app = render(React.createElement(App, { items, streaming }), {
    stdout,
    stdin: new EventEmitter(),
    patchConsole: false,
    exitOnCtrlC: false,
    incrementalRendering: true,
    maxFps: 100000,
  });
  await new Promise((r) => setTimeout(r, 50));
  const start = performance.now();
  for (let i = 0; i < updates; i++) {
    streaming += 'tok ';
    app.rerender(React.createElement(App, { items, streaming }));
    await new Promise((r) => setImmediate(r));
  }
  const perFrame = (performance.now() - start) / updates;
  app.unmount();
  return { perFrame, bytes: stdout.bytes };
}

await measure(10, 20);
const small = await measure(10);
const large = await measure(5000);
const windowedSmall = await measure(10, 200, true);
const windowedLarge = await measure(5000, 200, true);
console.log(
  JSON.stringify({
    figure: 'spike: Ink 6.8.0 streaming update, 5,000 vs 10 items, only the visible window in the tree',
    frame_ms_10: Number(windowedSmall.perFrame.toFixed(3)),
    frame_ms_5000: Number(windowedLarge.perFrame.toFixed(3)),
    ratio: Number((windowedLarge.perFrame / windowedSmall.perFrame).toFixed(2)),
  }),
);
console.log(
  JSON.stringify({
    figure: 'spike: Ink 6.8.0 streaming update, 5,000 vs 10 transcript items (all items in the tree)',
    frame_ms_10: Number(small.perFrame.toFixed(3)),
    frame_ms_5000: Number(large.perFrame.toFixed(3)),
    ratio: Number((large.perFrame / small.perFrame).toFixed(1)),
  }),
);
