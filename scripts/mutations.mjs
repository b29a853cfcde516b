#!/usr/bin/env node
/**
 * Deliberate breakages of important behaviour, each of which must turn a named test red
 * (MUTATIONS.md lists them with the reasoning). For each one: apply the one-line breakage,
 * rebuild when the test drives the built binary, run the named test (which must pass before the
 * breakage, or the red run would prove nothing), restore the file (always),
 * and print one JSON line `{ "id", "caught" }`. Exit code 1 if any breakage went uncaught.
 *
 *   node scripts/mutations.mjs            all of them
 *   node scripts/mutations.mjs REL-1 ...  only these ids
 *
 * Run it on a clean tree: it rewrites source files in place and restores them afterwards.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** id, file, the exact text to break and its replacement, whether the test needs a rebuild, the test. */
export const MUTATIONS = [
  {
    id: 'REL-1',
    file: 'packages/engine/src/session.ts',
    find: '  private async checkpoint(): Promise<void> {\n    try {',
    replace: '  private async checkpoint(): Promise<void> {\n    if (Number.isFinite(1)) return;\n    try {',
    build: true,
    test: ['packages/cli/test/run-durability.test.ts'],
  },
  {
    id: 'IMG-3',
    file: 'packages/engine/src/controller.ts',
    find: '    const text = submittedText(typed, spans);\n    type Outcome',
    replace: '    const text = spans.length > 0 ? submittedText(typed, spans) : typed;\n    type Outcome',
    build: true,
    test: ['packages/cli/test/run-images.test.ts', '-t', 'IMG-3'],
  },
  {
    id: 'IMG-12',
    file: 'packages/engine/src/session.ts',
    find: '{ takeFollowUps: () => this.admitFollowUps(hooks) }',
    replace: '{ takeFollowUps: hooks.takeFollowUps }',
    test: ['packages/engine/test/message-paths.test.ts', '-t', 'IMG-12'],
  },
  {
    id: 'MODEL-1',
    file: 'packages/engine/src/message-admission.ts',
    find: '  requireImageInput(text, options.model);',
    replace: '  void requireImageInput;',
    test: ['packages/engine/test/message-paths.test.ts', '-t', 'MODEL-1'],
  },
  {
    id: 'IMG-7',
    file: 'packages/engine/src/message-admission.ts',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: this is the source text of a template literal
    find: "  await options.registry.discardDeleted(held === '' ? text : `${text} ${held}`);",
    replace: '  await options.registry.discardDeleted(text);',
    test: ['packages/engine/test/message-paths.test.ts', '-t', 'IMG-7'],
  },
  {
    id: 'INTERRUPTED',
    file: 'packages/engine/src/turn.ts',
    find: 'function commitInterrupted(input: TurnInput, partialText: string): void {\n',
    replace: 'function commitInterrupted(input: TurnInput, partialText: string): void {\n  if (input) return;\n',
    test: ['packages/engine/test/interrupted-answer.test.ts'],
  },
  {
    id: 'BUDGET-7',
    file: 'packages/engine/src/turn.ts',
    find: '    const limit = input.budget.beforeModelCall();\n    if (limit) throw new BudgetStop(limit, lastError);',
    replace: '    const limit = null;\n    if (limit) throw new BudgetStop(limit, lastError);',
    test: ['packages/engine/test/budget.test.ts', '-t', 'RETRY-7'],
  },
  {
    id: 'RETRY-1',
    file: 'packages/core/src/provider-error.ts',
    find: "  'timeout',\n  'network',\n",
    replace: '',
    test: ['packages/engine/test/retry-kinds.test.ts'],
  },
  {
    id: 'WIRE-NAME',
    file: 'packages/providers/src/openai-chat/decode.ts',
    find: "  if (current === '' || incoming === current || incoming.startsWith(current)) return incoming;",
    replace: "  if (current === '') return incoming;",
    test: ['packages/providers/test/openai-chat.test.ts', '-t', 'repeated'],
  },
  {
    id: 'WIRE-DONE',
    file: 'packages/providers/src/openai-chat/client.ts',
    find: '        const note = inner.endOfStream();',
    replace: '        const note = undefined;',
    test: ['packages/providers/test/realstreams.test.ts', '-t', 'kimi-a.1'],
  },
  {
    id: 'BTW-1',
    file: 'packages/engine/src/controller.ts',
    find: '.slice(-SIDE_THREAD_LIMIT);',
    replace: '.slice(-SIDE_THREAD_LIMIT - 1);',
    test: ['packages/engine/test/side-question.test.ts', '-t', 'latest 20'],
  },
  {
    id: 'HIST-6',
    file: 'packages/engine/src/session.ts',
    find: "    for (const message of this.state.archive) {\n      for (const part of message.content) {\n        if (part.type === 'tool-call') toolCounts",
    replace:
      "    for (const message of this.state.context) {\n      for (const part of message.content) {\n        if (part.type === 'tool-call') toolCounts",
    test: ['packages/engine/test/compaction-session.test.ts', '-t', 'HIST-6'],
  },
  {
    id: 'BASH-1',
    file: 'packages/engine/src/workspace-tools.ts',
    find: '    bashTimeoutMs: bashTimeoutMs(options.config, options.bashTimeoutSeconds),',
    replace: '    bashTimeoutMs: 600_000,',
    test: ['packages/engine/test/bash-timer.test.ts', '-t', 'BASH-1'],
  },
  {
    id: 'CORE-3',
    file: 'packages/engine/src/session.ts',
    find: '    this.client = client;\n    this.modelSettings = settings;',
    replace: '    void client;\n    this.modelSettings = settings;',
    test: ['packages/engine/test/controller.test.ts', '-t', 'CORE-3'],
  },
  {
    id: 'BTW-3',
    file: 'packages/engine/src/side-question.ts',
    find: '        if (estimateTokens(messages) > limit)\n          throw new Error',
    replace: '        if (estimateTokens(messages) > limit * 100)\n          throw new Error',
    test: ['packages/engine/test/side-question.test.ts', '-t', 'does not fit'],
  },
  {
    id: 'AGENT-3',
    file: 'packages/engine/src/agents/runtime.ts',
    find: '        budget: scope.budget,',
    replace: '        budget: new (scope.budget.constructor)(scope.budget.limits),',
    test: ['packages/engine/test/agents.test.ts', '-t', 'shared model-call budget'],
  },
  {
    id: 'AGENT-3-PAR',
    file: 'packages/engine/src/session.ts',
    find: '          ...(this.agents ? { parallelLimit: this.agents.maxParallel } : {}),',
    replace: '          ...(this.agents ? { parallelLimit: 1 } : {}),',
    test: ['packages/engine/test/agents.test.ts', '-t', 'runs both children at once'],
  },
  {
    id: 'AGENT-1',
    file: 'packages/engine/src/agents/runtime.ts',
    find: '    const childContext: ChatMessage[] = [system, task];',
    replace: "    const childContext: ChatMessage[] = [system, userMessage(scope.tools.map((t) => t.name).join(', ')), task];",
    test: ['packages/engine/test/agents.test.ts', '-t', 'carries only its profile prompt'],
  },
  {
    id: 'CORE-6',
    file: 'packages/engine/src/session.ts',
    find: '        await markChildrenInterrupted(this.options.home, this.state.id, new Set(danglingTasks.map((c) => c.id)));',
    replace: '        void markChildrenInterrupted;',
    build: true,
    test: ['packages/cli/test/run-agents.test.ts', '-t', 'never runs twice'],
  },
  {
    id: 'REV-1',
    file: 'packages/engine/src/approval/reviewer/reviewer.ts',
    find: "  if (assessment.outcome !== 'allow' || allowFollowsRule(assessment, classification)) return verdict;",
    replace: '  if (Number.isFinite(1)) return verdict;',
    test: ['packages/engine/test/approval-reviewer.test.ts', '-t', 'hostile replies never approve'],
  },
  {
    id: 'HOOK-EXIT',
    file: 'packages/engine/src/session.ts',
    find: '          if (!decision.allow && decision.by === undefined) denied = true;',
    replace: '          if (!decision.allow) denied = true;',
    build: true,
    test: ['packages/cli/test/run-hooks.test.ts', '-t', 'own text naming the hook'],
  },
  {
    id: 'HOOK-SBX',
    file: 'packages/engine/src/extensions/hooks.ts',
    find: "    const wrapped = hook.project ? options.contain?.(['/bin/sh', '-c', hook.command], env) : undefined;",
    replace: '    const wrapped = undefined as ReturnType<NonNullable<typeof options.contain>>;',
    test: ['packages/engine/test/extensions-lifecycle-hooks.test.ts', '-t', 'SBX-1'],
  },
  {
    id: 'REL-1-GATE',
    file: 'packages/providers/src/transport/transport.ts',
    find: '        request.sendAfter.then(send, send);',
    replace: '        send();',
    test: ['packages/providers/test/send-after.test.ts', '-t', 'is written only once it settles'],
  },
  {
    id: 'REL-1-OVERLAP',
    file: 'packages/engine/src/session.ts',
    find: '        saving = this.checkpoint();',
    replace: '        saving = this.checkpoint();\n        await saving;',
    test: ['packages/engine/test/save-before-request.test.ts', '-t', 'slow disk'],
  },
  {
    id: 'REL-1-COMPACT',
    file: 'packages/engine/src/session.ts',
    find: '    await saving;\n    // HOOK-1: PreCompact hooks see the session before it is compacted.',
    replace: '    // HOOK-1: PreCompact hooks see the session before it is compacted.',
    test: ['packages/engine/test/save-before-request.test.ts', '-t', 'compaction'],
  },
  {
    id: 'REL-5-SEND',
    file: 'packages/providers/src/transport/transport.ts',
    find: '          if (sent) startFirstByte();',
    replace: '          startFirstByte();',
    test: ['packages/providers/test/send-after.test.ts', '-t', 'not from the connection'],
  },
  {
    id: 'WALK-LIVE',
    file: 'packages/engine/src/tools/builtin/walker.ts',
    find: '      if (++entered % WALK_YIELD_DIRS === 0) await new Promise<void>((resolve) => setImmediate(resolve));',
    replace: '      ++entered;',
    test: ['packages/engine/test/tools-search.test.ts', '-t', 'a walk lets the event loop run'],
  },
];

function run(command, args) {
  return spawnSync(command, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function build() {
  const result = run('npm', ['run', 'build']);
  if (result.status !== 0) throw new Error(`npm run build failed:\n${result.stdout}${result.stderr}`);
}

const wanted = new Set(process.argv.slice(2));
let uncaught = 0;
/** Whether the bundle was built from the unbroken tree (a broken build must be redone before a baseline). */
let cleanBuild = false;
let dirtyBuild = false;
for (const m of MUTATIONS) {
  if (wanted.size > 0 && !wanted.has(m.id)) continue;
  const path = join(root, m.file);
  const original = readFileSync(path, 'utf8');
  const count = original.split(m.find).length - 1;
  if (count !== 1) {
    process.stdout.write(
      `${JSON.stringify({ id: m.id, error: `expected the text once in ${m.file}, found it ${count} times` })}\n`,
    );
    uncaught++;
    continue;
  }
  let caught = false;
  let error;
  // The named test must pass on the unbroken tree, or a red run proves nothing.
  if (m.build && !cleanBuild) {
    build();
    cleanBuild = true;
  }
  const baseline = run('npx', ['vitest', 'run', ...m.test]);
  if (baseline.status !== 0) {
    process.stdout.write(`${JSON.stringify({ id: m.id, error: `the test fails before the breakage: ${m.test.join(' ')}` })}\n`);
    uncaught++;
    continue;
  }
  try {
    writeFileSync(path, original.replace(m.find, m.replace));
    if (m.build) {
      cleanBuild = false;
      dirtyBuild = true;
      build();
    }
    const result = run('npx', ['vitest', 'run', ...m.test]);
    caught = result.status !== 0;
  } catch (failure) {
    error = failure instanceof Error ? failure.message : String(failure);
  } finally {
    writeFileSync(path, original);
  }
  if (!caught) uncaught++;
  process.stdout.write(
    `${JSON.stringify({ id: m.id, file: m.file, test: m.test.join(' '), caught, ...(error ? { error } : {}) })}\n`,
  );
}
if (dirtyBuild && !cleanBuild) build();
process.exitCode = uncaught > 0 ? 1 : 0;
