// How a server's sandbox state is shown: on its card and on its detail page.

export type SandboxTone = "ok" | "warn" | "";

/** The chip for a sandbox state (`null`: nothing to show, a remote server). */
export function sandboxLabel(state: string): { text: string; tone: SandboxTone; title: string } | null {
  switch (state) {
    case "enforced":
      return { text: "sandboxed", tone: "ok", title: "It sees only the folders and network its sandbox grants (Landlock)" };
    case "not_enforced":
      return {
        text: "sandbox not enforced",
        tone: "warn",
        title: "Its sandbox is on, but this system's kernel cannot enforce it: it runs with all of your rights",
      };
    case "off":
      return { text: "not sandboxed", tone: "warn", title: "It runs with all of your rights: every file you can read, every host you can reach" };
    default:
      return null;
  }
}
