#!/usr/bin/env node
// CommonJS (bin/package.json): `--version` and `--help` are answered by one small CommonJS file
// before anything else loads (issue 22 item 4). Every other command runs the one CommonJS bundle,
// compiled with V8's code cache (dist/launch.cjs says where it is kept and why it is safe).
'use strict';

const argv = process.argv.slice(2);
if (!require('../dist/fast-path.cjs').answerFast(argv)) {
  require('../dist/launch.cjs').launch(require('node:path').join(__dirname, '..', 'dist', 'crystal.cjs'), argv);
}
