declare const CRYSTAL_VERSION: string;
declare const CRYSTAL_COMMIT: string;

const version = typeof CRYSTAL_VERSION === 'string' ? CRYSTAL_VERSION : '0.0.0-dev';
const commit = typeof CRYSTAL_COMMIT === 'string' ? CRYSTAL_COMMIT : '';

export const VERSION_TEXT = `Crystal Code ${version}\n${commit ? `Commit ${commit}\n` : ''}\nRuntime Node.js ${process.version}\nOS ${process.platform} ${process.arch}\n`;

const SESSION_FLAGS = `  -p, --provider NAME        provider from the catalog (this process only)
  -m, --model ID             model of that provider (this process only)
  -w, --workspace DIR        workspace folder (default: the current folder)
      --home DIR             Home folder (default: $CRYSTAL_HOME, then ~/.crystal)
      --approval MODE        default | edit | review | audit | full
      --approval-model on|off  the reviewer's own model (config approvalModel) on or off
      --approval-provider P  --approval-model-id M  --approval-thinking EFFORT  the reviewer's model
      --plan | --work        start in Plan or Work mode
      --thinking EFFORT      default | off | minimal | low | medium | high | maximum
      --model-calls N        model-call budget of a turn, or "unlimited"
      --tool-calls N         tool-call budget of a turn (0 allows none), or "unlimited"
      --duration S           turn duration budget in seconds, or "unlimited"
      --bash-timeout S       per-command bash timer in seconds, or "unlimited"
      --skills on|off        offer skills (the skill tool and its guidance; default: config, on)`;

export const HELP = {
  main: `Crystal Code: an AI coding agent for the terminal.

Usage:
  crystal [options]              interactive session in the current folder
  crystal -r ID | --resume ID    resume a saved session interactively (--continue: the newest here)
  crystal -r                     pick a session of this folder to resume from a searchable list
  crystal run [options] [PROMPT] run one turn without a terminal UI
  crystal web [options]          the same session engine behind a local Web page (prints its URL)
  crystal sessions [--all]       list saved sessions (--json for a machine-readable list)
  crystal export ID [--out FILE] write a session as JSON with its images inlined
  crystal export ID --agent PATH write a child agent's transcript (PATH: main/explore#1, or its id)
  crystal mcp list|get|add|remove  MCP servers of Home and this project ('crystal mcp --help')
  crystal login [PROVIDER]       store a provider's API key (asked without echo, or from stdin)
  crystal logout [PROVIDER]      remove a stored key
  crystal models [PROVIDER]      list the models a provider serves (--json; 'models add P M')
  crystal demo [--run]           an offline demo against a scripted fake provider, no key needed
  crystal checkpoints ID|gc      list a session's checkpoints (--json), or free old ones
  crystal rewind ID --to N       restore files and conversation to before message N (--code, --chat, --force)
  crystal rewind ID --redo       take back the last rewind or undo (--force)
  crystal --version              print the version
  crystal --help                 print this help

Options:
${SESSION_FLAGS}
      --fullscreen           the alternate-screen view (config: "terminalView": "fullscreen")
      --inline               the inline view, the default: the conversation stays in the
                             terminal's scroll-back

Configuration lives in Home (~/.crystal/config.json). See 'crystal run --help'.
`,
  run: `Usage: crystal run [options] [PROMPT]

Runs one turn without a terminal UI. The prompt is the argument, or standard input when
the argument is absent. A prompt '/name args' runs a custom command (.crystal/commands,
.claude/commands, ~/.crystal/commands); built-in slash commands are interactive only.

Options:
${SESSION_FLAGS}
      --format FORMAT        text (default) | json | stream-json
      --image PATH           attach an image (repeatable, in order)
      --resume ID            continue a saved session
      --continue             continue the newest session of this workspace
      --show-thinking        print the model's reasoning too
      --trust-workspace      load this workspace's plugin and exec tool sets even if it is
                             not trusted (for CI; otherwise only trusted workspaces load them)

Exit codes: 0 completed; 1 invalid command, configuration or credentials; 2 model request
failed or content filtered, the session could not be saved, or stdout failed; 3 budget
reached, context overflow or truncated output;
4 completed after an operator prompt was denied; 5 interrupted.
`,
};
