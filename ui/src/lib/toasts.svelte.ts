// Short-lived notices, announced politely to screen readers.
export interface Toast {
  id: number;
  tone: "ok" | "bad" | "info";
  text: string;
}

class Toasts {
  items = $state<Toast[]>([]);
  #next = 1;

  show(tone: Toast["tone"], text: string, ms = 4500) {
    const id = this.#next++;
    // The same notice again replaces the earlier one instead of stacking up.
    this.items = this.items.filter((t) => t.text !== text);
    this.items.push({ id, tone, text });
    // Keep the corner calm: at most three at a time, newest last.
    if (this.items.length > 3) this.items = this.items.slice(-3);
    setTimeout(() => this.dismiss(id), ms);
  }
  ok(text: string) {
    this.show("ok", text);
  }
  error(text: string) {
    this.show("bad", text, 8000);
  }
  info(text: string) {
    this.show("info", text);
  }
  /** Drops every notice (a dialog opening makes the earlier ones stale, and they would cover it). */
  clear() {
    this.items = [];
  }
  dismiss(id: number) {
    this.items = this.items.filter((t) => t.id !== id);
  }
}

export const toast = new Toasts();
