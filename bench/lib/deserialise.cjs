/**
 * Compiles the bundle at argv[2] with the code cache at argv[3] as the bin does (packages/cli/src/launch.ts: the
 * bundle's text as latin1, the file as the build wrote it, the main context's dynamic-import loader) and prints `{ ms, faults }`: the time and the
 * fresh pages of `new vm.Script` alone, which is where V8 deserialises the cache. Exits 1 when V8 refuses the cache.
 */
'use strict';
const { readFileSync } = require('node:fs');
const { Script, constants } = require('node:vm');

const [file, cacheFile] = process.argv.slice(2);
const source = readFileSync(file, 'latin1');
const cachedData = readFileSync(cacheFile);
const faults = process.resourceUsage().minorPageFault;
const start = process.hrtime.bigint();
const script = new Script(source, {
  filename: file,
  cachedData,
  importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
});
const ms = Number(process.hrtime.bigint() - start) / 1e6;
if (script.cachedDataRejected) {
  process.stderr.write(`V8 refused the code cache ${cacheFile} for ${file}\n`);
  process.exit(1);
}
process.stdout.write(`${JSON.stringify({ ms, faults: process.resourceUsage().minorPageFault - faults })}\n`);
