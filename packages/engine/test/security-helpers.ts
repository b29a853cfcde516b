import { type ParsedToolCall, ToolExecutor } from '@crystal/core';
import { type ApprovalAnswer, type ApprovalMode, type ApprovalRequest, createApprovalPolicy } from '../src/approval/index.js';
import { builtinExceptionMapper, TodoStore } from '../src/tools/builtin/index.js';
import { createBuiltinTools } from '../src/tools/catalog.js';

const never = new AbortController().signal;

/** Real tools behind a real policy; the operator answers `answer` and every ask is recorded. */
export function run(mode: ApprovalMode, ws: string, home: string, answer: ApprovalAnswer = 'deny', rgPath: string | null = null) {
  const asked: ApprovalRequest[] = [];
  const policy = createApprovalPolicy({
    mode,
    plan: () => false,
    workspace: ws,
    home,
    ask: async (request) => {
      asked.push(request);
      return answer;
    },
  });
  const tools = createBuiltinTools({ workspace: ws, home, bashTimeoutMs: null, todos: new TodoStore(), rgPath });
  const executor = new ToolExecutor({ tools, policy, mapException: builtinExceptionMapper });
  return {
    asked,
    policy,
    async call(c: ParsedToolCall) {
      const [result] = await executor.runBatch([c], never);
      return result;
    },
  };
}
