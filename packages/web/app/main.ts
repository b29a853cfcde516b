/** The page: connects to the host, draws the state it sends, and forwards the user's input. */
import { cancel, getState, HostRefusal, type Input, openEvents, send } from './api.js';
import { Controls, PAGE_KEYS, Progress, renderQueue, SidePanel } from './controls.js';
import { byId, el } from './dom.js';
import { ImageTray } from './image-tray.js';
import { Prompts } from './prompts.js';
import { Transcript } from './transcript.js';
import { AgentCards } from './agent-cards.js';
import type { Activity, ApprovalPrompt, PageEvent, PageState, QueueItem, QuestionPrompt } from './types.js';

let state: PageState | undefined;
let activity: Activity = 'idle';
let sending = false;
/** Enter was pressed while a send was in flight: send what the box holds once it is done. */
let sendAgain = false;

const text = byId<HTMLTextAreaElement>('text');
const composer = byId<HTMLFormElement>('composer');
const picker = byId<HTMLInputElement>('picker');
const cancelButton = byId<HTMLButtonElement>('cancel');
const alerts = byId<HTMLElement>('alerts');

const scope = (): string => state?.scope ?? '';
const transcript = new Transcript(byId('transcript'), scope);
const agents = new AgentCards(byId('transcript'), scope);
transcript.renderAgent = (card) => agents.replay(card);
const tray = new ImageTray(byId('tray'), alerts, () => state?.inputs);
const prompts = new Prompts(byId('prompts'), answer, () => text);
const controls = new Controls(scope, answer, (command) => answer({ kind: 'message', text: command }), showHelp);
const progress = new Progress(byId('progress'));
const side = new SidePanel(byId('side'));
/** Set once the session ended (`/quit`, the host stopped): the page stops reconnecting. */
let ended = false;
/** Failed connection attempts in a row; the host retries after a second (src/host.ts). */
let failures = 0;
const HOST_GONE_AFTER = 3;

const ACTIVITY_TEXT: Readonly<Record<Activity, string>> = {
  idle: 'Ready',
  turn: 'Working…',
  tool_batch: 'Running tools…',
  compacting: 'Compacting…',
};

function applyState(next: PageState): void {
  state = next;
  byId('session').setAttribute('data-scope', next.scope);
  controls.setMode(next.mode);
  void controls.refresh();
  transcript.reset(next.history);
  prompts.reset(next.approvals, next.questions);
  showQueue(next.queue);
  setActivity(next.activity);
}

function setActivity(next: Activity): void {
  activity = next;
  byId('activity').textContent = ACTIVITY_TEXT[next];
  document.body.dataset.activity = next;
  cancelButton.disabled = next === 'idle';
}

function showQueue(items: readonly QueueItem[]): void {
  renderQueue(byId('queue'), items, answer);
}

function showHelp(): void {
  transcript.help(PAGE_KEYS, controls.current?.commands ?? []);
}

function onEvent(event: PageEvent): void {
  switch (event.type) {
    case 'state':
      applyState(event.state as PageState);
      return;
    case 'session-changed':
      void getState().then(applyState, showError);
      return;
    case 'activity':
      setActivity(event.activity as Activity);
      break;
    case 'queue':
      showQueue(event.items as QueueItem[]);
      break;
    case 'approval-requested':
      prompts.addApproval(event.prompt as ApprovalPrompt);
      break;
    case 'approval-resolved':
    case 'question-resolved':
      prompts.remove(Number(event.id));
      break;
    case 'question-requested':
      prompts.addQuestion(event.prompt as QuestionPrompt);
      break;
    case 'mode-changed':
      controls.setMode(event.mode === 'plan' ? 'plan' : 'work');
      break;
    case 'command-output':
    case 'mcp-changed':
      void controls.refresh();
      break;
    case 'round-closed':
      controls.roundUsage(event.usage as { inputTokens?: number; outputTokens?: number } | undefined);
      break;
    case 'retry-scheduled':
      progress.retry(Number(event.attempt), Number(event.dueAt), String(event.message ?? ''));
      break;
    case 'round-started':
    case 'text-delta':
    case 'reasoning-delta':
    case 'tool-calls':
    case 'turn-finished':
      progress.stop();
      break;
    case 'side-started':
      side.started(String(event.question ?? ''));
      break;
    case 'side-thinking':
      side.thinking();
      break;
    case 'side-delta':
      side.delta(String(event.text ?? ''));
      break;
    case 'side-finished':
      side.finished(String(event.question ?? ''), String(event.answer ?? ''));
      break;
    case 'side-failed':
      side.failed(String(event.question ?? ''), String(event.message ?? ''));
      break;
    case 'side-open':
      side.open((event.thread ?? []) as { question: string; answer: string }[]);
      break;
    case 'side-cleared':
      side.clear();
      break;
    case 'hello':
      return;
    case 'quit':
    case 'host-stopped':
      endSession(String(event.sessionId ?? scope()), event.type === 'quit' ? hasMessages() : event.resumable !== false);
      break;
  }
  if (agents.onEvent(event)) return;
  transcript.onEvent(event);
}

/**
 * The session is over (issue 19): the page says so, shows how to resume it, and stops
 * reconnecting; the composer is disabled, so nothing typed now can be lost in a send.
 */
function endSession(sessionId: string, resumable: boolean, why = 'The session ended; the host has stopped.'): void {
  ended = true;
  events.close();
  setActivity('idle');
  byId('activity').textContent = 'Session ended';
  document.body.dataset.ended = 'true';
  const box = byId('ended');
  const resume = [`crystal web --resume ${sessionId}`, `crystal --resume ${sessionId}`];
  box.replaceChildren(
    el('h2', { text: why }),
    resumable
      ? el(
          'p',
          {},
          'Resume it in a terminal with ',
          el('code', { text: resume[0] }),
          ' (this page) or ',
          el('code', { text: resume[1] }),
          ' (the terminal).',
        )
      : el('p', { text: 'It had no messages, so nothing was saved.' }),
  );
  box.hidden = false;
  prompts.reset([], []);
  for (const control of composer.querySelectorAll<HTMLButtonElement | HTMLTextAreaElement>('button, textarea')) {
    control.disabled = true;
  }
}

/** Whether the session has anything to resume: a message of either side. */
function hasMessages(): boolean {
  return byId('transcript').querySelector('article.message') !== null;
}

function showError(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  alerts.replaceChildren(el('p', { text: message }));
  alerts.hidden = false;
}

async function answer(input: Input): Promise<void> {
  try {
    await send(scope(), input);
  } catch (error) {
    showError(error);
  }
}

/**
 * Typed text is never lost (issue 14 item 7): the box and the tray keep everything while a send
 * is in flight; a success removes only what was sent (text typed meanwhile stays), and Enter
 * pressed meanwhile sends the rest as soon as the send in flight is done.
 */
async function submit(): Promise<void> {
  if (!state) return;
  if (sending) {
    sendAgain = true;
    return;
  }
  const files = tray.files;
  const message = text.value;
  // The page's own /help: its keys, not the terminal's (issue 19).
  if (files.length === 0 && /^\/(help|h)\s*$/.test(message.trim())) {
    showHelp();
    text.value = '';
    return;
  }
  if (message.trim() === '' && files.length === 0 && state.queue.length === 0) return;
  sending = true;
  try {
    const result = await send(scope(), { kind: 'message', text: message }, files);
    result.images.forEach((number, index) => {
      const file = files[index];
      if (file) transcript.names.set(number, file.name);
    });
    text.value = unsentRest(text.value, message);
    tray.removeFiles(files);
  } catch (error) {
    sendAgain = false;
    if (error instanceof HostRefusal) {
      tray.markRefused(error.refusal.position, error.refusal.error);
      if (error.status === 409 && error.refusal.scope !== undefined) void getState().then(applyState, showError);
    } else {
      showError(error);
    }
  } finally {
    sending = false;
  }
  if (sendAgain) {
    sendAgain = false;
    if (text.value.trim() !== '' || tray.size > 0) await submit();
  }
}

/** What the box holds beyond the message that was sent: text typed while the send was in flight. */
function unsentRest(now: string, sent: string): string {
  if (now === sent) return '';
  if (now.startsWith(sent)) return now.slice(sent.length).replace(/^\s+/, '');
  // The sent part was edited meanwhile: keep the whole box rather than guess.
  return now;
}

composer.addEventListener('submit', (event) => {
  event.preventDefault();
  void submit();
});
text.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    void submit();
  } else if (event.key === 'Escape' && activity !== 'idle') {
    event.preventDefault();
    void cancel(scope()).catch(showError);
  }
});
cancelButton.addEventListener('click', () => void cancel(scope()).catch(showError));
byId('attach').addEventListener('click', () => picker.click());
picker.addEventListener('change', () => {
  if (picker.files) tray.add([...picker.files], 'picker');
  picker.value = '';
});

const hasFiles = (event: DragEvent): boolean => [...(event.dataTransfer?.types ?? [])].includes('Files');
composer.addEventListener('dragover', (event) => {
  if (!hasFiles(event)) return;
  event.preventDefault();
  composer.classList.add('dropping');
});
composer.addEventListener('dragleave', () => composer.classList.remove('dropping'));
composer.addEventListener('drop', (event) => {
  composer.classList.remove('dropping');
  if (!hasFiles(event)) return;
  event.preventDefault();
  tray.add([...(event.dataTransfer?.files ?? [])], 'drop');
});
// A file dropped anywhere else must not navigate away from the page.
window.addEventListener('dragover', (event) => event.preventDefault());
window.addEventListener('drop', (event) => event.preventDefault());
document.addEventListener('paste', (event) => {
  const files = [...(event.clipboardData?.files ?? [])];
  if (files.length === 0) return;
  event.preventDefault();
  tray.add(files, 'paste');
});

const events = openEvents(onEvent, (connected, readyState) => {
  if (ended) return;
  if (connected) {
    failures = 0;
    return;
  }
  failures++;
  // A host killed without a word (kill -9, a crash) never says goodbye: after a few failed
  // attempts the page says it is gone; a refusal (the host restarted with a new token) at once.
  if (failures >= HOST_GONE_AFTER || readyState === EventSource.CLOSED) {
    endSession(scope(), hasMessages(), 'The host is not answering; it has stopped or crashed.');
  } else {
    byId('activity').textContent = 'Reconnecting…';
  }
});
