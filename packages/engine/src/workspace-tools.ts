/**
 * Assembles a session's tools in one place for every surface: the built-in catalog of the
 * current mode (TOOLS-1), external tool sets (TOOLS-4), the approval policy plugged into the
 * executor (CORE-5, APPR-1..3) and the tool exception mapper. `crystal run` passes no `ask`,
 * so every call that would ask is denied with the normal rejection (CLI-2).
 */
import type { ToolContext, ToolDefinition } from '@crystal/core';
import {
  type ApprovalReply,
  type ApprovalMode,
  type ApprovalOutcome,
  type ApprovalPolicy,
  type ApprovalRequest,
  type AutoPassCard,
  createApprovalPolicy,
} from './approval/index.js';
import { bashTimeoutMs } from './bash-timeout.js';
import { childEnvironment } from './child-env.js';
import { type Containment, createContainment } from './containment.js';
import type { Config } from './config/schema.js';
import { discoverToolSets, externalToolFacts, externalToolsFor, loadExternalTools } from './external-tools/index.js';
import { builtinExceptionMapper, type Question, type QuestionAnswers, TodoStore } from './tools/builtin/index.js';
import { imageLimitsFrom } from './images/index.js';
import { catalogFor, createBuiltinTools, type Mode, WORK_TOOLS } from './tools/catalog.js';
import { createImageTools, imageModelClient, multimodalToolsFor } from './tools/image-tools.js';

export interface WorkspaceToolOptions {
  readonly home: string;
  readonly workspace: string;
  readonly config: Config;
  readonly mode: Mode;
  readonly approval?: ApprovalMode | undefined;
  /** `--bash-timeout` for this process: seconds, or null for unlimited (BASH-1). */
  readonly bashTimeoutSeconds?: number | null | undefined;
  readonly askApproval?: (request: ApprovalRequest) => Promise<ApprovalReply>;
  readonly askQuestion?: (questions: readonly Question[], context: ToolContext) => Promise<QuestionAnswers | 'dismissed'>;
  readonly onOutput?: (callId: string, chunk: string) => void;
  readonly onAutoPass?: (card: AutoPassCard) => void;
  readonly onDecided?: (outcome: ApprovalOutcome) => void;
  readonly onNote?: (text: string) => void;
  readonly sessionId: () => string;
  readonly imageInput: () => boolean;
  /** Load `tools.json` sets (default true). */
  readonly externalTools?: boolean;
  readonly env?: NodeJS.ProcessEnv;
  /** The platform the sandbox is detected for (tests); default `process.platform`. */
  readonly platform?: NodeJS.Platform;
}

export interface WorkspaceTools {
  /** The catalog of the current mode, asked each round. */
  readonly tools: () => readonly ToolDefinition[];
  readonly policy: ApprovalPolicy;
  readonly todos: TodoStore;
  readonly mapException: typeof builtinExceptionMapper;
  readonly notes: readonly string[];
  /** The OS sandbox bash and exec tools run in (SBX-1..3). */
  readonly containment: Containment;
  mode(): Mode;
  setMode(mode: Mode): void;
}

export async function assembleWorkspaceTools(options: WorkspaceToolOptions): Promise<WorkspaceTools> {
  let mode = options.mode;
  const todos = new TodoStore();
  // SEC-6: one scrubbed environment for every child; SBX-1: one sandbox for bash and exec tools.
  const hostEnv = options.env ?? process.env;
  const env = childEnvironment(options.config, hostEnv);
  const containment = await createContainment({
    config: options.config,
    home: options.home,
    workspace: options.workspace,
    env: hostEnv,
    ...(options.platform ? { platform: options.platform } : {}),
    // A host off the allow list asks the operator through the approval policy (made below).
    ...(options.askApproval ? { askHost: (host: string, signal: AbortSignal) => policy.askHost(host, signal) } : {}),
  });
  const builtins = createBuiltinTools({
    workspace: options.workspace,
    bashTimeoutMs: bashTimeoutMs(options.config, options.bashTimeoutSeconds),
    todos,
    env,
    containment,
    ...(options.askQuestion ? { ask: options.askQuestion } : {}),
    ...(options.onOutput ? { onOutput: options.onOutput } : {}),
  });
  let external: Awaited<ReturnType<typeof loadExternalTools>> = { tools: [], notes: [] };
  if (options.externalTools !== false) {
    const discovery = await discoverToolSets({ home: options.home, workspace: options.workspace });
    external = await loadExternalTools(
      discovery,
      {
        workspace: options.workspace,
        sessionId: options.sessionId,
        approvalMode: () => policy.mode,
        imageInput: options.imageInput,
        env,
        containment,
      },
      WORK_TOOLS,
    );
  }
  // IMG-22..26: view_image for image-capable models, describe_image when imageModel is set.
  const imageTools = createImageTools({
    workspace: options.workspace,
    limits: imageLimitsFrom(options.config.images),
    createImageClient: () => imageModelClient(options.home, options.config, options.env ?? process.env),
    ...(options.config.imageModel?.thinkingEffort ? { imageModelThinking: options.config.imageModel.thinkingEffort } : {}),
  });
  const execTools = new Set(external.tools.filter((tool) => tool.runner === 'exec').map((tool) => tool.name));
  const spawns = (tool: string): boolean => tool === 'bash' || execTools.has(tool);
  const policy: ApprovalPolicy = createApprovalPolicy({
    mode: options.approval ?? options.config.approval ?? 'default',
    plan: () => mode === 'plan',
    workspace: options.workspace,
    home: options.home,
    ...(options.askApproval ? { ask: options.askApproval } : {}),
    ...(options.onAutoPass ? { onAutoPass: options.onAutoPass } : {}),
    ...(options.onDecided ? { onDecided: options.onDecided } : {}),
    ...(options.onNote ? { onNote: options.onNote } : {}),
    externalTool: externalToolFacts(external.tools),
    sandbox: {
      covers: (tool) => containment.sandboxed && spawns(tool),
      cardLine: (tool) =>
        spawns(tool) ? `${containment.sandboxed ? 'Sandboxed' : 'Not sandboxed'}: ${containment.description}` : undefined,
      grantNetwork: (callId) => containment.grantNetwork(callId),
    },
  });
  return {
    tools: () => [
      ...catalogFor(mode, builtins),
      ...multimodalToolsFor({ imageInput: options.imageInput(), imageModel: options.config.imageModel, tools: imageTools }),
      ...externalToolsFor(external.tools, mode),
    ],
    policy,
    todos,
    mapException: builtinExceptionMapper,
    notes: containment.note ? [containment.note, ...external.notes] : external.notes,
    containment,
    mode: () => mode,
    setMode: (next) => {
      mode = next;
    },
  };
}
