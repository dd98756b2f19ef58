// A small W3C WebDriver client over plain HTTP (Node's fetch), enough to drive the app through
// tauri-driver: sessions, elements, clicks, keys, scripts, frames and screenshots.

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

export class WebDriverError extends Error {}

export class Session {
  constructor(base, id) {
    this.base = base;
    this.id = id;
  }

  static async create(base, capabilities) {
    const res = await call(base, "POST", "/session", { capabilities: { alwaysMatch: capabilities } });
    return new Session(base, res.sessionId);
  }

  cmd(method, path, body) {
    return call(this.base, method, `/session/${this.id}${path}`, body);
  }

  async quit() {
    try {
      await call(this.base, "DELETE", `/session/${this.id}`);
    } catch {
      // The app may already be gone.
    }
  }

  async find(css) {
    const r = await this.cmd("POST", "/element", { using: "css selector", value: css });
    return new Element(this, r[ELEMENT]);
  }

  async findAll(css) {
    const r = await this.cmd("POST", "/elements", { using: "css selector", value: css });
    return r.map((e) => new Element(this, e[ELEMENT]));
  }

  /** Wait until `css` matches (and, if given, `pred(element)` holds); return the element. */
  async waitFor(css, { timeout = 10000, pred, what } = {}) {
    const end = Date.now() + timeout;
    let last;
    for (;;) {
      try {
        const els = await this.findAll(css);
        for (const el of els) {
          if (!pred || (await pred(el))) return el;
        }
      } catch (e) {
        last = e;
      }
      if (Date.now() > end) throw new WebDriverError(`timed out waiting for ${what ?? css}${last ? ` (${last.message})` : ""}`);
      await sleep(100);
    }
  }

  async waitGone(css, timeout = 10000) {
    await this.waitUntil(async () => (await this.findAll(css)).length === 0, { timeout, what: `${css} to go away` });
  }

  async waitUntil(fn, { timeout = 10000, what = "condition" } = {}) {
    const end = Date.now() + timeout;
    let last;
    for (;;) {
      try {
        if (await fn()) return;
      } catch (e) {
        // The page re-rendered under us (stale element): try again.
        last = e;
      }
      if (Date.now() > end) throw new WebDriverError(`timed out waiting for ${what}${last ? ` (${last.message})` : ""}`);
      await sleep(100);
    }
  }

  execute(script, args = []) {
    return this.cmd("POST", "/execute/sync", { script, args });
  }

  executeAsync(script, args = []) {
    return this.cmd("POST", "/execute/async", { script, args });
  }

  /** Send keys to the focused element (e.g. "\uE00C" for Escape). */
  async keys(text) {
    const actions = [...text].flatMap((ch) => [
      { type: "keyDown", value: ch },
      { type: "keyUp", value: ch },
    ]);
    await this.cmd("POST", "/actions", { actions: [{ type: "key", id: "kbd", actions }] });
    await this.cmd("DELETE", "/actions");
  }

  /** Tab, or Shift+Tab. */
  async tab(shift = false) {
    const TAB = "\uE004";
    const SHIFT = "\uE008";
    const press = [
      { type: "keyDown", value: TAB },
      { type: "keyUp", value: TAB },
    ];
    const actions = shift ? [{ type: "keyDown", value: SHIFT }, ...press, { type: "keyUp", value: SHIFT }] : press;
    await this.cmd("POST", "/actions", { actions: [{ type: "key", id: "kbd", actions }] });
    await this.cmd("DELETE", "/actions");
  }

  /** Look inside the frame `element` (an iframe) until `toTop`. */
  async intoFrame(element) {
    await this.cmd("POST", "/frame", { id: { [ELEMENT]: element.id } });
  }

  async toTop() {
    await this.cmd("POST", "/frame", { id: null });
  }

  /** A PNG of the window after two animation frames (so it is not a frame stale). */
  async screenshot() {
    await this.executeAsync(
      "const done = arguments[arguments.length - 1]; requestAnimationFrame(() => requestAnimationFrame(() => done(true)));",
    );
    const b64 = await this.cmd("GET", "/screenshot");
    return Buffer.from(b64, "base64");
  }
}

export class Element {
  constructor(session, id) {
    this.s = session;
    this.id = id;
  }
  cmd(method, path, body) {
    return this.s.cmd(method, `/element/${this.id}${path}`, body);
  }
  /** Click it as a user would: scrolled to the middle of the view first, once it has stopped
   * moving (a list that re-renders or a panel that fills in above it moves it: a click aimed
   * at where it was lands on something else), and, while something lies over it (a notice in
   * the corner fades after a few seconds), again until it is free. */
  async click() {
    await this.s.execute("arguments[0].scrollIntoView({ block: 'center', inline: 'nearest' })", [{ [ELEMENT]: this.id }]);
    await this.settled();
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        return await this.cmd("POST", "/click", {});
      } catch (e) {
        if (!String(e.message).includes("element click intercepted") || Date.now() > deadline) throw e;
        await sleep(250);
      }
    }
  }
  /** Wait (up to 3 s) until its box is the same over three animation frames. */
  async settled() {
    await this.s.executeAsync(
      `const [el, done] = arguments;
       const box = () => { const r = el.getBoundingClientRect(); return [r.x, r.y, r.width, r.height].join(); };
       const end = performance.now() + 3000;
       let last = box(), same = 0;
       const frame = () => {
         const now = box();
         same = now === last ? same + 1 : 0;
         last = now;
         if (same >= 3 || performance.now() > end || !el.isConnected) done(true);
         else requestAnimationFrame(frame);
       };
       requestAnimationFrame(frame);`,
      [{ [ELEMENT]: this.id }],
    );
  }
  text() {
    return this.cmd("GET", "/text");
  }
  attr(name) {
    return this.cmd("GET", `/attribute/${name}`);
  }
  prop(name) {
    return this.cmd("GET", `/property/${name}`);
  }
  clear() {
    return this.cmd("POST", "/clear", {});
  }
  type(text) {
    return this.cmd("POST", "/value", { text });
  }
  async find(css) {
    const r = await this.cmd("POST", "/element", { using: "css selector", value: css });
    return new Element(this.s, r[ELEMENT]);
  }
  async findAll(css) {
    const r = await this.cmd("POST", "/elements", { using: "css selector", value: css });
    return r.map((e) => new Element(this.s, e[ELEMENT]));
  }
}

/** No WebDriver command may take longer than this: a hung window fails its step saying which
 * command hung, instead of the runner waiting for ever. */
const COMMAND_LIMIT_MS = 90_000;

async function call(base, method, path, body) {
  let res;
  let text;
  try {
    res = await fetch(base + path, {
      method,
      headers: body ? { "content-type": "application/json" } : undefined,
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(COMMAND_LIMIT_MS),
    });
    text = await res.text();
  } catch (e) {
    const what = body?.script ? ` (${String(body.script).slice(0, 80)})` : body?.value ? ` (${String(body.value).slice(0, 80)})` : "";
    throw new WebDriverError(`${method} ${path}${what}: ${e.name === "TimeoutError" ? `no answer in ${COMMAND_LIMIT_MS / 1000} s` : `${e.message}${e.cause ? `: ${e.cause.message ?? e.cause}` : ""}`}`);
  }
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new WebDriverError(`${method} ${path}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  }
  if (!res.ok || (json.value && json.value.error)) {
    const v = json.value ?? {};
    throw new WebDriverError(`${method} ${path}: ${v.error ?? res.status}: ${v.message ?? text.slice(0, 300)}`);
  }
  return json.value;
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}
