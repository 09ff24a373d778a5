import { readFile } from 'node:fs/promises';
import { secureHeaders } from 'hono/secure-headers';
import type { RouteModule } from '../context';
import { sessionToolsRoute } from './session-tools-route';

/**
 * The web chat page (docs/chat-page.md): its static files, served from memory at `/` and
 * `/chat/*` without a key (the page asks for one and sends it only in the Authorization
 * header of the API calls it makes). `assets/` sits beside this file in the sources and in
 * `dist/` alike (scripts/build.ts copies it), so the compiled gateway serves the same files.
 */
const ASSETS = new URL('./assets/', import.meta.url);

/** The only files there are: a fixed table, so no request path ever reaches the file system. */
const FILES = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/chat/chat.js': { file: 'chat.js', type: 'text/javascript; charset=utf-8' },
  '/chat/sse.js': { file: 'sse.js', type: 'text/javascript; charset=utf-8' },
  '/chat/render.js': { file: 'render.js', type: 'text/javascript; charset=utf-8' },
  '/chat/chat.css': { file: 'chat.css', type: 'text/css; charset=utf-8' },
} as const;

/**
 * Model text and tool results are untrusted, and the page holds a key: nothing but the
 * page's own script and style may run or load, and it talks to this origin only. The page
 * never writes HTML from data (it builds nodes and sets their text), so this is the second
 * wall, not the first. No referrer: the Temporal UI link must not carry this page's address.
 */
const pageHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    connectSrc: ["'self'"],
    imgSrc: ["'self'"],
    baseUri: ["'none'"],
    formAction: ["'none'"],
    frameAncestors: ["'none'"],
  },
  referrerPolicy: 'no-referrer',
  xFrameOptions: 'DENY',
  crossOriginOpenerPolicy: 'same-origin',
  crossOriginResourcePolicy: 'same-origin',
});

export const pageRoutes: RouteModule = (app, ctx) => {
  const contents = new Map<string, Promise<string>>();
  const load = (file: string) => {
    let text = contents.get(file);
    if (!text) {
      text = readFile(new URL(file, ASSETS), 'utf8');
      contents.set(file, text);
    }
    return text;
  };
  for (const [route, { file, type }] of Object.entries(FILES)) {
    app.get(route, pageHeaders, async (c) => {
      // `no-cache`: revalidate on every load, so a new gateway's page never runs an old script.
      return c.body(await load(file), 200, { 'content-type': type, 'cache-control': 'no-cache' });
    });
  }
  sessionToolsRoute(app, ctx);
};
