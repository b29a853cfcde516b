#!/usr/bin/env node
// CommonJS (bin/package.json): `--version` and `--help` are answered by one small CommonJS file
// before anything else loads (issue 22 item 4). Every other command runs the CommonJS bundles,
// compiled with V8's code cache (dist/launch.cjs says where it is kept and why it is safe; a
// terminal session starts from dist/terminal.cjs).
'use strict';

const argv = process.argv.slice(2);
// The words dist/fast-path.cjs answers (packages/cli/src/fast-path.ts): any other command does
// not load it, about a millisecond of every start (issue 22). A word missing here is still
// answered, by the bundle.
const FAST = ['--version', '-v', 'version', '--help', '-h', 'help'];
if (!(FAST.includes(argv[0]) && require('../dist/fast-path.cjs').answerFast(argv))) {
  require('../dist/launch.cjs').launch(require('node:path').join(__dirname, '..', 'dist', 'crystal.cjs'), argv);
}
