/** The page: connects to the host, draws the state it sends, and forwards the user's input. */
import { cancel, getState, HostRefusal, type Input, openEvents, send } from './api.js';
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
const tray = new ImageTray(byId('tray'), alerts, () => state?.inputs);
const prompts = new Prompts(byId('prompts'), answer);

const ACTIVITY_TEXT: Readonly<Record<Activity, string>> = {
  idle: 'Ready',
  turn: 'Working…',
  tool_batch: 'Running tools…',
  compacting: 'Compacting…',
};

function applyState(next: PageState): void {
  state = next;
  byId('model').textContent = `${next.provider}/${next.model}`;
  byId('session').textContent = `Session ${next.scope}`;
  byId('session').setAttribute('data-scope', next.scope);
  byId('mode').textContent = next.mode === 'plan' ? 'Plan' : 'Work';
  transcript.reset(next.history);
  prompts.reset(next.approvals, next.questions);
  renderQueue(next.queue);
  setActivity(next.activity);
}

function setActivity(next: Activity): void {
  activity = next;
  byId('activity').textContent = ACTIVITY_TEXT[next];
  document.body.dataset.activity = next;
  cancelButton.disabled = next === 'idle';
}

function renderQueue(items: readonly QueueItem[]): void {
  const root = byId('queue');
  root.hidden = items.length === 0;
  root.replaceChildren(
    el('h2', { text: `Queued (${items.length})` }),
    el('ol', {}, ...items.map((item) => el('li', { class: item.kind, text: item.text.replace(/\u2063/g, '') }))),
  );
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
      renderQueue(event.items as QueueItem[]);
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
      byId('mode').textContent = event.mode === 'plan' ? 'Plan' : 'Work';
      break;
    case 'quit':
      byId('activity').textContent = 'The session ended; the host has stopped.';
      events.close();
      break;
  }
  if (agents.onEvent(event)) return;
  transcript.onEvent(event);
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

const events = openEvents(onEvent, (connected) => {
  if (!connected) byId('activity').textContent = 'Reconnecting…';
});
