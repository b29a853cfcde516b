/**
 * Assembles a session's tools in one place for every surface: the built-in catalog of the
 * current mode (TOOLS-1), external tool sets (TOOLS-4), the approval policy plugged into the
 * executor (CORE-5, APPR-1..3) and the tool exception mapper. `crystal run` passes no `ask`,
 * so every call that would ask is denied with the normal rejection (CLI-2).
 */
import { join } from 'node:path';
import type { ToolContext, ToolDefinition } from '@crystal/core';
import {
  type ApprovalReply,
  type ApprovalMode,
  type ApprovalOutcome,
  type ApprovalPolicy,
  type ApprovalRequest,
  type AutoPassCard,
  createApprovalPolicy,
  type Reviewer,
} from './approval/index.js';
import { bashTimeoutMs } from './bash-timeout.js';
import { childEnvironment } from './child-env.js';
import { configWarnings } from './config/load.js';
import { type Containment, createContainment } from './containment.js';
import type { Config } from './config/schema.js';
import { discoverToolSets, externalToolFacts, externalToolsFor, loadExternalTools } from './external-tools/index.js';
import { builtinExceptionMapper, type Question, type QuestionAnswers, TodoStore } from './tools/builtin/index.js';
import { loadHooks, withPostToolUseHooks, withPreToolUseHooks } from './extensions/hooks.js';
import { createLifecycleHooks, type LifecycleHooks } from './extensions/lifecycle-hooks.js';
import { ToolScope, withToolScope } from './extensions/allowed-tools.js';
import { discoverSkills, skillTool } from './extensions/skills.js';
import { imageLimitsFrom } from './images/index.js';
import { catalogFor, createBuiltinTools, type Mode, WORK_TOOLS } from './tools/catalog.js';
import type { ProjectCodeTrust } from './trust.js';
import { createImageTools, imageModelClient, multimodalToolsFor } from './tools/image-tools.js';
import type { StdioWrapper } from '@crystal/mcp';
import { configuredServers, type McpHost, startMcpHost } from './mcp/index.js';

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
  readonly onOutput?: (callId: string, chunk: string, stream: 'stdout' | 'stderr') => void;
  readonly onAutoPass?: (card: AutoPassCard) => void;
  readonly onDecided?: (outcome: ApprovalOutcome) => void;
  readonly onNote?: (text: string) => void;
  readonly sessionId: () => string;
  readonly imageInput: () => boolean;
  /** Skills (SKILL-1): the `skill` tool and the skill-tree auto-pass; over `config.skills`, default on. */
  readonly skills?: boolean | undefined;
  /** The user's home folder for the Claude, agents and OpenCode skill folders; defaults to `os.homedir()`. */
  readonly userHome?: string | undefined;
  /**
   * The operator's explicit yes to project code for this process (`crystal run
   * --trust-workspace`). Omitted (the interactive surfaces): `"workspaceTrust": false` grants it,
   * as those surfaces asked the trust question first otherwise (SEC-1, CLI-8).
   */
  readonly trustWorkspace?: boolean;
  /** Load `tools.json` sets (default true). */
  readonly externalTools?: boolean;
  /** Leave starting the MCP servers to `startMcp()` (the terminal starts them after its first frame). */
  readonly deferMcpStart?: boolean;
  /** An MCP server's state or lists changed. */
  readonly onMcpChange?: (server: string) => void;
  /** The OS sandbox hook: rewrites how a stdio MCP server is started (none yet). */
  readonly wrapMcpStdio?: StdioWrapper;
  readonly env?: NodeJS.ProcessEnv;
  /** The platform the sandbox is detected for (tests); default `process.platform`. */
  readonly platform?: NodeJS.Platform;
  /** The reviewer model of Review and Audit (REV-1). */
  readonly reviewer?: Reviewer;
}

export interface WorkspaceTools {
  /** The catalog of the current mode, asked each round. */
  readonly tools: () => readonly ToolDefinition[];
  readonly policy: ApprovalPolicy;
  readonly todos: TodoStore;
  readonly mapException: typeof builtinExceptionMapper;
  readonly notes: readonly string[];
  /** The session's MCP servers (MCP-1..6). */
  readonly mcp: McpHost;
  /** The OS sandbox bash and exec tools run in (SBX-1..3). */
  readonly containment: Containment;
  /** HOOK-1: SessionStart, UserPromptSubmit, Stop and PreCompact hooks. */
  readonly lifecycle: LifecycleHooks;
  /** CMD-1, SKILL-1: the running turn's `allowed-tools` restrictions. */
  readonly scope: ToolScope;
  mode(): Mode;
  setMode(mode: Mode): void;
  /** Starts the MCP servers in the background when `deferMcpStart` held them (idempotent). */
  startMcp(): void;
  /** Stops the MCP servers. */
  close(): Promise<void>;
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
    ...(options.onNote ? { onNote: options.onNote } : {}),
  });
  // SEC-4: the tools open only the final path the policy checked for the call.
  const checkedPath = (callId: string): string | undefined => policy.checkedPath(callId);
  const builtins = createBuiltinTools({
    workspace: options.workspace,
    home: options.home,
    checkedPath,
    bashTimeoutMs: bashTimeoutMs(options.config, options.bashTimeoutSeconds),
    todos,
    env,
    containment,
    ...(options.askQuestion ? { ask: options.askQuestion } : {}),
    ...(options.onOutput ? { onOutput: options.onOutput } : {}),
  });
  let external: Awaited<ReturnType<typeof loadExternalTools>> = { tools: [], notes: [] };
  const projectCode: ProjectCodeTrust = {
    home: options.home,
    workspace: options.workspace,
    granted: options.trustWorkspace ?? options.config.workspaceTrust === false,
  };
  if (options.externalTools !== false) {
    const discovery = await discoverToolSets({ home: options.home, workspace: options.workspace, projectCode });
    external = await loadExternalTools(
      discovery,
      {
        workspace: options.workspace,
        projectCode,
        sessionId: options.sessionId,
        approvalMode: () => policy.mode,
        imageInput: options.imageInput,
        env,
        containment,
      },
      WORK_TOOLS,
    );
  }
  // SBX-1 / MCP-2: a project's stdio servers start in the sandbox, which is detected first.
  if (!options.wrapMcpStdio && configuredServers(options).servers.some((server) => server.source === 'project'))
    await containment.resolve();
  const mcp = startMcpHost({
    home: options.home,
    workspace: options.workspace,
    config: options.config,
    imageInput: options.imageInput,
    ...(options.env ? { env: options.env } : {}),
    ...(options.onNote ? { onNote: options.onNote } : {}),
    ...(options.onMcpChange ? { onChange: options.onMcpChange } : {}),
    // SBX-1 / MCP-2: a project's stdio servers are project code and start inside the OS sandbox.
    ...(options.wrapMcpStdio ? { wrapStdio: options.wrapMcpStdio } : sandboxedProjectServers(containment)),
    autoStart: options.deferMcpStart !== true,
  });
  const externalFacts = externalToolFacts(external.tools);
  // IMG-22..26: view_image for image-capable models, describe_image when imageModel is set.
  const imageTools = createImageTools({
    workspace: options.workspace,
    home: options.home,
    checkedPath,
    limits: imageLimitsFrom(options.config.images),
    createImageClient: () => imageModelClient(options.home, options.config, options.env ?? process.env),
    ...(options.config.imageModel?.thinkingEffort ? { imageModelThinking: options.config.imageModel.thinkingEffort } : {}),
  });
  // SKILL-1: skills are text and load in any workspace; they are found afresh when asked.
  const skillsOn = options.skills ?? options.config.skills ?? true;
  const skillPlaces = { home: options.home, workspace: options.workspace, userHome: options.userHome };
  const scope = new ToolScope();
  const skills = skillsOn
    ? [
        skillTool(
          () => discoverSkills(skillPlaces),
          (skill) => scope.add({ source: `the skill "${skill.id}"`, patterns: skill.allowedTools }),
        ),
      ]
    : [];
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
    ...(options.reviewer ? { reviewer: options.reviewer } : {}),
    externalTool: (name) => externalFacts(name) ?? mcp.facts(name),
    ...(skillsOn ? { skillRoots: () => discoverSkills(skillPlaces).roots } : {}),
    sandbox: {
      covers: (tool) => spawns(tool) && containment.sandboxed,
      prepare: async (tool) => {
        if (spawns(tool)) await containment.resolve();
      },
      cardLine: (tool) =>
        spawns(tool) ? `${containment.sandboxed ? 'Sandboxed' : 'Not sandboxed'}: ${containment.description}` : undefined,
      grantNetwork: (callId) => containment.grantNetwork(callId),
    },
  });
  // HOOK-1: config.json hooks always; the project's only when trust.ts mayRunProjectCode says so.
  const hooks = loadHooks({ home: options.home, workspace: options.workspace, hooks: options.config.hooks, projectCode });
  // SBX-1: a project's hooks are project code and run in the OS sandbox like bash, when it is on;
  // with any configured, the sandbox is detected now (SessionStart runs at open).
  const projectHooks = [
    hooks.preToolUse,
    hooks.postToolUse,
    hooks.sessionStart,
    hooks.userPromptSubmit,
    hooks.stop,
    hooks.preCompact,
  ].some((list) => list.some((hook) => hook.project));
  if (projectHooks) await containment.resolve();
  const contain =
    projectHooks && containment.sandboxed
      ? (argv: readonly [string, ...string[]], childEnv: NodeJS.ProcessEnv) =>
          containment.wrap({ argv, cwd: options.workspace, env: childEnv })
      : undefined;
  // SEC-6: hooks get the scrubbed child environment like every other child (no provider keys).
  const hookContext = { workspace: options.workspace, sessionId: options.sessionId, onNote: options.onNote, env, contain };
  const lifecycle = createLifecycleHooks(hooks, {
    ...hookContext,
    transcriptPath: () => join(options.home, 'sessions', `${options.sessionId()}.json`),
  });
  return {
    tools: () =>
      withPostToolUseHooks(
        [
          ...catalogFor(mode, builtins),
          ...multimodalToolsFor({ imageInput: options.imageInput(), imageModel: options.config.imageModel, tools: imageTools }),
          ...externalToolsFor(external.tools, mode),
          // MCP-5: a server that came up since the last round joins now (TURN-1).
          ...externalToolsFor(mcp.tools(), mode),
          ...skills,
        ],
        hooks.postToolUse,
        hookContext,
      ),
    policy: withToolScope(withPreToolUseHooks(policy, hooks.preToolUse, hookContext), scope),
    scope,
    todos,
    mapException: builtinExceptionMapper,
    // REL-12: unknown config keys are shown with the start-up notes, once.
    notes: [
      ...configWarnings(options.config),
      ...(containment.note ? [containment.note] : []),
      ...external.notes,
      ...mcp.notes,
      ...hooks.notes,
    ],
    containment,
    lifecycle,
    mcp,
    startMcp: () => mcp.manager?.start(),
    close: () => mcp.close(),
    mode: () => mode,
    setMode: (next) => {
      mode = next;
    },
  };
}

/** The stdio hook that starts the project's (`.mcp.json`) servers in the sandbox; Home's run as configured. */
function sandboxedProjectServers(containment: Containment): { wrapStdio?: StdioWrapper } {
  return {
    wrapStdio: (launch, spec) => {
      // Home's servers run as configured; with project servers the sandbox was detected at assembly.
      if (spec.source !== 'project' || !containment.sandboxed) return launch;
      const wrapped = containment.wrap({ argv: [launch.command, ...launch.args], cwd: launch.cwd, env: { ...launch.env } });
      if (!wrapped) return launch;
      const env: Record<string, string> = {};
      for (const [key, value] of Object.entries(wrapped.env)) if (value !== undefined) env[key] = value;
      return { command: wrapped.file, args: [...wrapped.args], env, cwd: launch.cwd };
    },
  };
}
