// Opening links: only https, and only through the core (which refuses anything else too).
import { api } from "./ipc";
import { isSafeHref } from "./markdown";
import { toast } from "./toasts.svelte";

export async function openExternal(href: string): Promise<void> {
  if (!isSafeHref(href)) return;
  try {
    await api.openExternal(href);
  } catch (e) {
    toast.error(`Could not open the link: ${(e as Error).message}`);
  }
}
