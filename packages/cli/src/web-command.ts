/** `crystal web` (issue 9 replaces this placeholder). */
export async function webCommand(_argv: readonly string[]): Promise<number> {
  process.stderr.write("crystal: the Web surface is not built yet in this version. Use 'crystal run PROMPT'.\n");
  return 1;
}
