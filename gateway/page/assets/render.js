/**
 * A session's log events as DOM nodes. Everything shown comes from the model, a tool or a
 * user, so it is text: nodes are built with createElement and filled with textContent,
 * never parsed as HTML. Each log event is one element carrying its `data-seq`.
 */

/** `tag.class` with text content. */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const LANE_WORDS = {
  'read-only': 'read-only · may run in parallel',
  'side-effecting': 'side-effecting · alone, once',
};

/** The lane badge of a tool call: the session's own word for the tool (`GET /v1/sessions/{id}/tools`). */
export function fillLane(badge, lane) {
  badge.textContent = lane === undefined ? 'lane unknown' : (LANE_WORDS[lane] ?? lane);
  badge.classList.toggle('side-effecting', lane === 'side-effecting');
}

/**
 * The element of one log event, or for a `tool/result`, the element to put in its call's
 * card. `lanes` maps a tool name to its lane.
 */
export function renderEvent(event, lanes) {
  const item = el(event.type === 'tool/result' ? 'div' : 'li', `event ${event.type.replace('/', '-')}`);
  item.dataset.seq = String(event.seq);
  item.dataset.type = event.type;
  switch (event.type) {
    case 'turn/start':
      item.classList.add('user');
      item.append(el('div', 'bubble', event.text));
      break;
    case 'assistant': {
      item.classList.add('assistant');
      if (event.message.text !== '') item.append(el('div', 'bubble', event.message.text));
      const calls = event.message.toolCalls.map((call) => call.name).join(', ');
      if (calls !== '') item.append(el('div', 'meta', `asks for ${calls}`));
      break;
    }
    case 'tool/call': {
      item.classList.add('tool');
      item.dataset.callId = event.callId;
      item.dataset.tool = event.name;
      const head = el('div', 'head');
      head.append(el('span', 'name', event.name), el('span', 'lane'), el('span', 'meta', ` #${event.callId}`));
      fillLane(head.querySelector('.lane'), lanes.get(event.name));
      item.append(head, el('pre', 'input', JSON.stringify(event.input, null, 2)));
      break;
    }
    case 'tool/result':
      item.classList.add('result', event.code);
      item.append(el('pre', '', `${event.code === 'ok' ? '✓' : '✗'} ${event.code === 'ok' ? '' : `${event.code}: `}${event.content}`));
      break;
    case 'turn/end': {
      const failed = event.status !== 'completed';
      item.classList.add('meta');
      if (failed) item.classList.add('failed');
      const why = event.failure ? `: ${event.failure.type} ${event.failure.message}` : event.reason ? ` (${event.reason})` : '';
      item.textContent = `turn ${event.turn} ${event.status}${why}`;
      break;
    }
    case 'step/start':
      item.classList.add('meta');
      item.textContent = `step ${event.step} · ${event.model}`;
      break;
    case 'step/end':
      item.classList.add('meta');
      if (event.status !== 'completed') item.classList.add('failed');
      item.textContent = `step ${event.step} ${event.status}${event.failure ? `: ${event.failure.type} ${event.failure.message}` : ''}`;
      break;
    case 'context/compacted':
      item.classList.add('meta');
      item.textContent = `context compacted: ${event.tokensBefore} → ${event.tokensAfter} tokens`;
      break;
    default:
      item.classList.add('meta');
      item.textContent = event.type;
  }
  return item;
}

/** The model's text of one step as it streams, until the log's `assistant` event replaces it. */
export function renderLive() {
  const item = el('li', 'live');
  const nodes = { thinking: el('div', 'thinking'), text: el('div', 'bubble') };
  item.append(nodes.thinking, nodes.text);
  return { item, nodes };
}

/** `$0.0123 of $1.00 · 1,234 of 10,000 tokens`, from a state's or a progress frame's spend and budget. */
export function describeSpend(spend, budget) {
  const usd = spend.costUsd === null || spend.costUsd === undefined ? 'cost unknown' : `$${spend.costUsd.toFixed(4)}`;
  const tokens = (spend.inputTokens ?? 0) + (spend.outputTokens ?? 0);
  const maxUsd = budget?.usd ?? budget?.maxUsd;
  const maxTokens = budget?.tokens ?? budget?.maxTokens;
  const money = maxUsd ? `${usd} of $${maxUsd.toFixed(2)}` : usd;
  const count = maxTokens ? `${tokens.toLocaleString('en')} of ${maxTokens.toLocaleString('en')} tokens` : `${tokens.toLocaleString('en')} tokens`;
  return `spent ${money} · ${count}${maxUsd || maxTokens ? '' : ' · no budget'}`;
}
