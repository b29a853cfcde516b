#!/usr/bin/env node
// Node 22.1+ keeps compiled code of the bundle between starts (issue 22 item 4); Node 20 has no
// compile cache and skips this. The bundle is imported after it so its chunks are cached too.
import module from 'node:module';

module.enableCompileCache?.();
await import('../dist/crystal.js');
