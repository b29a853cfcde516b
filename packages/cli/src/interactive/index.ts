/** `crystal` with no command: the interactive terminal (issue 8 replaces this placeholder). */
export async function interactiveCommand(_argv: readonly string[]): Promise<number> {
  process.stderr.write("crystal: the interactive terminal is not built yet in this version. Use 'crystal run PROMPT'.\n");
  return 1;
}
