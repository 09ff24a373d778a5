/**
 * A publisher in a process of its own, for test/live-stream.test.ts: over NATS
 * (LIVE_NATS_URL, LIVE_SUBJECT_PREFIX) it publishes a delta frame of session LIVE_SESSION
 * every 20 ms, one character further each time, until it is killed. The test sees them
 * cross from this process to its own, and go on after the broker restarts.
 */
import { LIVE_STREAM_VERSION } from '../../contracts/live-stream';
import { createLiveStreamPublisher } from '../../streaming';

const { LIVE_NATS_URL: url, LIVE_SUBJECT_PREFIX: subjectPrefix, LIVE_SESSION: sessionId } = process.env;
if (!url || !subjectPrefix || !sessionId) throw new Error('LIVE_NATS_URL, LIVE_SUBJECT_PREFIX and LIVE_SESSION are required');

const publisher = createLiveStreamPublisher({ mode: 'nats', servers: [url], subjectPrefix }, { publisherId: 'child', log: (line) => console.log(line) });
let offset = 0;
setInterval(() => {
  publisher.publish({ kind: 'delta', v: LIVE_STREAM_VERSION, sessionId, turn: 1, step: 1, attempt: 1, channel: 'text', offset, text: 'x' });
  offset++;
}, 20);
