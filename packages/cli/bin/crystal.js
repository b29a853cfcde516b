#!/usr/bin/env node
// CommonJS (bin/package.json): `--version` and `--help` are answered by one small CommonJS file
// before any ES module loads, since starting the ES module loader alone costs a Node start about
// a third more (issue 22 item 4). Every other command imports the bundle; Node 22.1+ keeps its
// compiled code between starts (Node 20 has no compile cache and skips this).
'use strict';

if (!require('../dist/fast-path.cjs').answerFast(process.argv.slice(2))) {
  require('node:module').enableCompileCache?.();
  import('../dist/crystal.js');
}
