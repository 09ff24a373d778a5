/**
 * The chat page: one session at a time over the gateway's HTTP API (docs/chat-page.md).
 *
 * What this tab remembers lives in sessionStorage, never in localStorage or a cookie: the
 * key (sent only in the Authorization header), and the open session with the log events
 * shown and the seq of the last one. A reload renders those events again and resumes the
 * event stream after that seq (`Last-Event-ID`), so it misses no event and shows none
 * twice; the log is the truth, the model's streamed text only a preview of it.
 */
import { readEventStream } from './sse.js';
import { describeSpend, el, fillLane, renderEvent, renderLive } from './render.js';

const KEY_ITEM = 'agent-chat:key';
const SESSION_ITEM = 'agent-chat:session';
/** Between two attempts to reopen a dropped event stream: doubling from the first, up to the last. */
const RECONNECT_MS = [500, 5_000];

const $ = (id) => document.getElementById(id);
const page = {
  keyForm: $('key-form'),
  keyInput: $('key-input'),
  forgetKey: $('forget-key'),
  chat: $('chat'),
  startPanel: $('start-panel'),
  agentSelect: $('agent-select'),
  agentDescription: $('agent-description'),
  sessionBar: $('session-bar'),
  sessionId: $('session-id'),
  uiLink: $('ui-link'),
  spend: $('spend'),
  newSession: $('new-session'),
  transcript: $('transcript'),
  approvals: $('approvals'),
  progress: $('progress'),
  composer: $('composer'),
  message: $('message'),
  send: $('send'),
  cancel: $('cancel'),
  error: $('error'),
};

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let key = sessionStorage.getItem(KEY_ITEM);
/** The open session: `{ id, uiUrl, lastSeq, events }`, as sessionStorage keeps it. */
let session;
/** Ends the open session's event stream. */
let stopFollowing = () => undefined;
/** Tool name → lane, from the session's tools. */
const lanes = new Map();
/** `turn:step` → the streaming preview of that step's text. */
const live = new Map();
/** Calls waiting for a decision: callId → { name, input }. */
const pending = new Map();
let agents = [];

/** `#key=…` (and `&session=…`, a session to open), as `npm start` prints the page's address. */
function readFragment() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const given = fragment.get('key');
  const sessionId = fragment.get('session');
  if (!given && !sessionId) return;
  if (given) {
    key = given;
    sessionStorage.setItem(KEY_ITEM, key);
  }
  if (sessionId) sessionStorage.setItem(SESSION_ITEM, JSON.stringify({ id: sessionId }));
  // Out of the address bar (and so out of bookmarks, screenshots and the history list).
  history.replaceState(null, '', location.pathname + location.search);
}

async function api(method, path, body) {
  const headers = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await response.json().catch(() => undefined);
  if (!response.ok) throw new ApiError(response.status, json?.error?.message ?? `the gateway answered ${response.status}`);
  return json;
}

function showError(error) {
  page.error.textContent = error instanceof Error ? error.message : String(error);
  page.error.hidden = false;
  if (error instanceof ApiError && error.status === 401) forgetKey();
}

function clearError() {
  page.error.hidden = true;
  page.error.textContent = '';
}

/** Runs an action of the user's, showing its failure instead of throwing it away. */
function act(action) {
  return async (...args) => {
    clearError();
    try {
      await action(...args);
    } catch (error) {
      showError(error);
    }
  };
}

function forgetKey() {
  key = null;
  sessionStorage.removeItem(KEY_ITEM);
  closeSession();
  page.chat.hidden = true;
  page.forgetKey.hidden = true;
  page.keyForm.hidden = false;
}

async function showChat() {
  page.keyForm.hidden = true;
  page.forgetKey.hidden = false;
  page.chat.hidden = false;
  agents = (await api('GET', '/v1/agents')).agents;
  page.agentSelect.replaceChildren(
    ...agents.map((agent) => {
      const option = el('option', '', `${agent.name} (${agent.model})`);
      option.value = agent.name;
      return option;
    }),
  );
  // A key that may start sessions from settings gets the worker's default model too.
  const byDefault = el('option', '', 'no agent: the default model');
  byDefault.value = '';
  page.agentSelect.append(byDefault);
  describeAgent();
  const stored = sessionStorage.getItem(SESSION_ITEM);
  if (stored) await openSession(JSON.parse(stored));
}

function describeAgent() {
  const agent = agents.find((a) => a.name === page.agentSelect.value);
  page.agentDescription.textContent = agent?.description ?? '';
}

function saveSession() {
  try {
    sessionStorage.setItem(SESSION_ITEM, JSON.stringify(session));
  } catch {
    // Over the tab's storage quota: keep the session, not its events; a reload reads them all again.
    sessionStorage.setItem(SESSION_ITEM, JSON.stringify({ ...session, lastSeq: -1, events: [] }));
  }
}

async function openSession(stored) {
  session = { id: stored.id, uiUrl: stored.uiUrl, lastSeq: -1, events: [] };
  page.startPanel.hidden = true;
  page.sessionBar.hidden = false;
  page.sessionId.textContent = session.id;
  setUiLink(session.uiUrl);
  for (const event of stored.events ?? []) showLogEvent(event);
  saveSession();
  void follow(session.id);
  const [state] = await Promise.all([api('GET', `/v1/sessions/${encodeURIComponent(session.id)}`), loadLanes()]);
  setUiLink(state.uiUrl);
  // A session Temporal no longer holds the state of (closed long ago) has no spend to show.
  if (state.spend) page.spend.textContent = describeSpend(state.spend, state.budget);
  for (const approval of state.pendingApprovals ?? []) pending.set(approval.callId, { name: approval.name, input: approval.input });
  showApprovals();
}

function setUiLink(url) {
  if (!url || session === undefined) return;
  session.uiUrl = url;
  page.uiLink.href = url;
  saveSession();
}

function closeSession() {
  stopFollowing();
  session = undefined;
  sessionStorage.removeItem(SESSION_ITEM);
  lanes.clear();
  live.clear();
  pending.clear();
  page.transcript.replaceChildren();
  page.approvals.replaceChildren();
  page.progress.textContent = '';
  page.spend.textContent = '';
  page.sessionBar.hidden = true;
  page.startPanel.hidden = false;
  page.cancel.disabled = true;
}

async function loadLanes() {
  if (session === undefined) return;
  const { tools } = await api('GET', `/v1/sessions/${encodeURIComponent(session.id)}/tools`);
  for (const tool of tools) lanes.set(tool.name, tool.lane);
  for (const card of page.transcript.querySelectorAll('.tool')) fillLane(card.querySelector('.lane'), lanes.get(card.dataset.tool));
}

/**
 * Follows the session's event stream until the session closes: after a drop it opens the
 * stream again with `Last-Event-ID`, the seq of the last log event shown.
 */
async function follow(sessionId) {
  const controller = new AbortController();
  stopFollowing = () => controller.abort();
  let wait = RECONNECT_MS[0];
  while (!controller.signal.aborted) {
    try {
      const headers = { authorization: `Bearer ${key}`, accept: 'text/event-stream' };
      if (session.lastSeq >= 0) headers['last-event-id'] = String(session.lastSeq);
      const response = await fetch(`/v1/sessions/${encodeURIComponent(sessionId)}/events`, { headers, signal: controller.signal });
      if (!response.ok) {
        const json = await response.json().catch(() => undefined);
        const error = new ApiError(response.status, json?.error?.message ?? `the event stream answered ${response.status}`);
        // Not found, not allowed, a bad key: trying again changes nothing.
        if (response.status < 500 && response.status !== 429) throw Object.assign(error, { final: true });
        throw error;
      }
      wait = RECONNECT_MS[0];
      await readEventStream(response.body, onStreamEvent);
    } catch (error) {
      if (controller.signal.aborted) return;
      if (error.final) return showError(error);
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
    wait = Math.min(wait * 2, RECONNECT_MS[1]);
  }
}

function onStreamEvent({ event, data }) {
  const item = JSON.parse(data);
  if (event === 'log') {
    if (item.seq <= session.lastSeq) return;
    showLogEvent(item);
    saveSession();
  } else if (event === 'delta') showDelta(item);
  else if (event === 'progress') showProgress(item);
}

function showLogEvent(event) {
  const node = renderEvent(event, lanes);
  const card = event.type === 'tool/result' ? page.transcript.querySelector(`.tool[data-call-id="${CSS.escape(event.callId)}"]`) : null;
  if (card) card.append(node);
  else page.transcript.append(node.tagName === 'LI' ? node : wrapped(node));
  session.lastSeq = event.seq;
  session.events.push(event);
  switch (event.type) {
    case 'turn/start':
      setRunning(event.turn);
      break;
    case 'turn/end':
      setRunning(undefined);
      page.progress.textContent = '';
      for (const [at, preview] of live) if (at.startsWith(`${event.turn}:`)) dropLive(at, preview);
      break;
    case 'assistant':
      dropLive(`${event.turn}:${event.step}`, live.get(`${event.turn}:${event.step}`));
      break;
    case 'tools/listed':
      void loadLanes().catch(showError);
      break;
    case 'tool/result':
      if (pending.delete(event.callId)) showApprovals();
      break;
  }
  node.scrollIntoView({ block: 'nearest' });
}

function wrapped(node) {
  const item = el('li', '');
  item.append(node);
  return item;
}

function setRunning(turn) {
  page.cancel.disabled = turn === undefined;
}

function dropLive(at, preview) {
  preview?.item.remove();
  live.delete(at);
}

/**
 * The model's text as it streams, best effort: a retry (a higher attempt) starts the text
 * again, a frame already shown is skipped, and a gap (frames lost, or the page opened
 * mid-step) is marked and streaming goes on. The step's `assistant` event replaces it all.
 */
function showDelta(frame) {
  const at = `${frame.turn}:${frame.step}`;
  if (session.events.some((e) => e.type === 'assistant' && e.turn === frame.turn && e.step === frame.step)) return;
  let preview = live.get(at);
  if (preview && frame.attempt < preview.attempt) return;
  if (!preview || frame.attempt > preview.attempt) {
    preview?.item.remove();
    preview = { ...renderLive(), attempt: frame.attempt, shown: { text: '', thinking: '' } };
    live.set(at, preview);
    page.transcript.append(preview.item);
  }
  const shown = preview.shown[frame.channel];
  let next;
  if (frame.offset === shown.length) next = shown + frame.text;
  else if (frame.offset < shown.length) next = shown + frame.text.slice(shown.length - frame.offset);
  else next = `${shown}… ${frame.text}`;
  preview.shown[frame.channel] = next;
  preview.nodes[frame.channel].textContent = next;
  preview.item.scrollIntoView({ block: 'nearest' });
}

function showProgress(frame) {
  page.progress.textContent = frame.state === 'turn_idle' ? '' : frame.line;
  if (frame.spend) page.spend.textContent = describeSpend(frame.spend, frame.budget);
  if (frame.state === 'approval_waiting' && frame.callId) {
    pending.set(frame.callId, { name: frame.toolName ?? frame.callId, input: pending.get(frame.callId)?.input });
    showApprovals();
  }
  if (frame.state === 'approval_decided' && frame.callId && pending.delete(frame.callId)) showApprovals();
}

function showApprovals() {
  page.approvals.replaceChildren(
    ...[...pending].map(([callId, call]) => {
      const box = el('div', 'approval');
      box.dataset.callId = callId;
      box.append(el('div', '', `${call.name} #${callId} waits for your decision`));
      if (call.input) box.append(el('pre', '', JSON.stringify(call.input, null, 2)));
      const approve = el('button', 'approve', 'Approve');
      const deny = el('button', 'deny', 'Deny');
      approve.type = deny.type = 'button';
      approve.addEventListener('click', act(() => decide(callId, true)));
      deny.addEventListener('click', act(() => decide(callId, false)));
      box.append(approve, deny);
      return box;
    }),
  );
}

async function decide(callId, approved) {
  await api('POST', `/v1/sessions/${encodeURIComponent(session.id)}/approvals/${encodeURIComponent(callId)}`, approved ? { approved } : { approved, reason: 'denied in the chat page' });
  pending.delete(callId);
  showApprovals();
}

async function sendMessage(event) {
  event.preventDefault();
  const text = page.message.value.trim();
  if (text === '') return;
  page.send.disabled = true;
  try {
    if (session === undefined) {
      const agent = page.agentSelect.value;
      const created = await api('POST', '/v1/sessions', agent === '' ? { message: text } : { agent, message: text });
      await openSession({ id: created.sessionId, uiUrl: created.uiUrl });
    } else {
      await api('POST', `/v1/sessions/${encodeURIComponent(session.id)}/messages`, { text });
    }
    page.message.value = '';
  } finally {
    page.send.disabled = false;
  }
}

async function cancelTurn() {
  await api('POST', `/v1/sessions/${encodeURIComponent(session.id)}/cancel`);
}

page.keyForm.addEventListener(
  'submit',
  act(async (event) => {
    event.preventDefault();
    key = page.keyInput.value.trim();
    page.keyInput.value = '';
    sessionStorage.setItem(KEY_ITEM, key);
    await showChat();
  }),
);
page.forgetKey.addEventListener('click', forgetKey);
page.agentSelect.addEventListener('change', describeAgent);
page.newSession.addEventListener('click', closeSession);
page.composer.addEventListener('submit', act(sendMessage));
page.cancel.addEventListener('click', act(cancelTurn));

readFragment();
if (key) void act(showChat)();
else page.keyForm.hidden = false;
