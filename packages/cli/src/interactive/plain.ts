/**
 * TUI-7: when the output is not a terminal, the session prints sequential plain text. Input
 * lines are prompts (or slash commands); while an approval waits, the next line answers it
 * (`y`, `s`, `a`, anything else denies). At the end of the input the session finishes its
 * work, saves and exits.
 */
import { createInterface } from 'node:readline';
import { type ControllerEvent, type SessionController, stripMarkerPrefix } from '@crystal/engine';
import { resultSummary, toolCard } from './tool-summary.js';

export interface PlainOptions {
  readonly controller: SessionController;
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
}

const ANSWERS: Record<string, 'once' | 'session' | 'always'> = { y: 'once', yes: 'once', s: 'session', a: 'always' };

export function runPlain(options: PlainOptions): Promise<string> {
  const { controller, stdout } = options;
  let midLine = false;
  let approval: number | undefined;
  let inputClosed = false;
  const write = (text: string): void => {
    stdout.write(text);
    midLine = !text.endsWith('\n');
  };
  const line = (text: string): void => {
    if (midLine) write('\n');
    write(`${text}\n`);
  };
  const onEvent = (event: ControllerEvent): void => {
    switch (event.type) {
      case 'turn-started':
      case 'follow-up-sent':
        line(`> ${stripMarkerPrefix(event.text).replace(/\n/g, '\n  ')}`);
        break;
      case 'text-delta':
        write(event.text);
        break;
      case 'attempt-discarded':
        line('(the partial reply of the failed attempt is discarded)');
        break;
      case 'retry-scheduled':
        line(`retrying model request: ${event.message} (attempt ${event.attempt} in ${Math.ceil(event.delayMs / 1000)}s)`);
        break;
      case 'round-closed':
        if (midLine) write('\n');
        break;
      case 'tool-calls':
        for (const call of event.calls) {
          const card = toolCard(call);
          line(`* ${card.name} ${card.summary}`);
        }
        break;
      case 'tool-results':
        for (const r of event.results) {
          const output = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
          const shown = resultSummary(r.name, output, r.isError);
          if (shown) line(`  ${shown.replace(/\n/g, '\n  ')}`);
        }
        break;
      case 'note':
        line(`note: ${event.text}`);
        break;
      case 'error':
        line(`error: ${event.message}`);
        break;
      case 'command-output':
        if (event.output.kind === 'text') line(`${event.output.title ? `${event.output.title}\n` : ''}${event.output.text}`);
        else if (event.output.kind === 'error') line(`error: ${event.output.text}`);
        break;
      case 'approval-requested': {
        const card = event.prompt.card;
        if (inputClosed) {
          line(`Denied ${card.tool} ${card.subject}: no input left to answer the approval.`);
          queueMicrotask(() => controller.answerApproval(event.prompt.id, 'deny'));
          break;
        }
        approval = event.prompt.id;
        line(
          `Approve ${card.tool} ${card.subject} (risk ${card.risk}, ${card.authority}${card.sandbox ? `; ${card.sandbox}` : ''})? [y] once, [s] session, [a] always, [n] deny:`,
        );
        break;
      }
      case 'approval-resolved':
        approval = undefined;
        break;
      case 'question-requested':
        line('A question was asked; answer it in the interactive terminal. It is dismissed here.');
        controller.answerQuestion(event.prompt.id, 'dismissed');
        break;
      case 'side-finished':
        line(`btw: ${event.answer}`);
        break;
      case 'side-failed':
        line(`btw failed: ${event.message}`);
        break;
      case 'turn-finished':
        if (event.result.stopReason === 'interrupted') line('Interrupted.');
        break;
      default:
        break;
    }
  };
  const unsubscribe = controller.on(onEvent);
  return new Promise<string>((resolve) => {
    const finish = (event: ControllerEvent): void => {
      if (event.type !== 'quit') return;
      unsubscribe();
      stopQuit();
      if (midLine) write('\n');
      resolve(event.sessionId);
    };
    const stopQuit = controller.on(finish);
    const input = createInterface({ input: options.stdin, terminal: false });
    input.on('line', (text) => {
      if (approval !== undefined) {
        const id = approval;
        approval = undefined;
        controller.answerApproval(id, ANSWERS[text.trim().toLowerCase()] ?? 'deny');
        return;
      }
      controller.submit(text, []);
    });
    input.on('close', () => {
      inputClosed = true;
      if (approval !== undefined) controller.answerApproval(approval, 'deny');
      void controller.whenIdle().then(() => controller.quit());
    });
  });
}
