/** The built-in tools (TOOLS-1, TOOLS-2) and what they share. */
export { bashTool, effectiveTimeout } from './bash.js';
export { editTool } from './edit.js';
export { builtinExceptionMapper, ToolFailure } from './failure.js';
export { globTool } from './glob.js';
export { GREP_MATCH_CAP, grepTool } from './grep.js';
export { compilePattern } from './pattern.js';
export type { Question, QuestionAnswers, QuestionOption, ToolHost } from './host.js';
export { listTool } from './list.js';
export { capOutput, OUTPUT_CAP } from './output-cap.js';
export { DISMISSED, questionTool } from './question.js';
export { BINARY_REFUSAL, READ_MAX_LINES, readTool } from './read.js';
export { findRipgrep } from './ripgrep.js';
export {
  TODO_MAX_CONTENT,
  TODO_MAX_ITEMS,
  type TodoItem,
  type TodoStatus,
  TodoStore,
  todoReadTool,
  todoWriteTool,
} from './todo.js';
export { findGitRoot, SKIP_DIRS } from './walker.js';
export { WRITE_MAX_BYTES, writeTool } from './write.js';
