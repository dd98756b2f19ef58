// The one module that talks to the Rust side. It wraps the generated bindings (bindings.ts, from
// specta) so that every call either returns its data or throws an `ApiFailure` carrying the
// core's `{code, message, fields}`, and re-exports the bindings' types. No other module imports
// `@tauri-apps/api` or the bindings (ipc.test.ts checks).

import { Channel } from "@tauri-apps/api/core";
import { commands } from "./bindings";
import { sentence } from "./text";
import type {
  Answer,
  ApiError,
  AppInfo,
  AppViewInfo,
  BudgetView,
  CallInput,
  CallOutcome,
  CatalogCard,
  CatalogFilter,
  CategoryCount,
  ClientsOverview,
  Completion,
  CompletionTarget,
  CustomServer,
  EditForm,
  ExportPreview,
  ExportResult,
  ExportSelection,
  FieldError,
  FieldIssue,
  ImportPreview,
  ImportResultView,
  InstallForm,
  InstallRequest,
  JobStatus,
  MarketPage,
  MarketQuery,
  Offer,
  OutdatedView,
  PolicyView,
  PromptOutcome,
  ReadOutcome,
  RegistryStatus,
  RemovedEntry,
  RemoveResult,
  RootView,
  SandboxPanel,
  SandboxRequest,
  ServerDetail,
  ServerToolsView,
  ServerView,
  SessionEvent,
  SessionView,
  StageProgress,
  StartupStep,
  TestReport,
  ToolDiff,
  ToolForm,
  ToolsChangeInput,
  ToolsChangeResult,
  TraceEntry,
  UpdatePreview,
  UseIn,
  Value,
  ErrorCode,
  ProfileView,
  HooksChange,
  ActivityView,
  GatewayQuestionView,
  RunningGatewayView,
  FindingView,
  ServerDiagnosis,
} from "./bindings";

// Every type of the generated bindings, as they are (types only: the commands stay in here).
export type * from "./bindings";

/** A failed call: the core's error, or a framework failure mapped to code `internal`. Its
 * message and field messages are sentences (the core's are written for the CLI's "error: "). */
export class ApiFailure extends Error {
  readonly code: ErrorCode;
  readonly fields: FieldError[];
  constructor(error: ApiError) {
    super(sentence(error.message));
    this.name = "ApiFailure";
    this.code = error.code;
    this.fields = (error.fields ?? []).map((f) => ({ field: f.field, message: sentence(f.message) }));
  }

  /** The message for one field, if the core named it. */
  field(key: string): string | undefined {
    return this.fields.find((f) => f.field === key)?.message;
  }
}

/** Normalise anything thrown into an ApiFailure. */
export function toFailure(e: unknown): ApiFailure {
  if (e instanceof ApiFailure) return e;
  if (e && typeof e === "object" && "code" in e && "message" in e) {
    const err = e as ApiError;
    return new ApiFailure({ code: err.code, message: String(err.message), fields: err.fields ?? [] });
  }
  const message = e instanceof Error ? e.message : String(e);
  return new ApiFailure({ code: "internal", message, fields: [] });
}

type Typed<T> = Promise<{ status: "ok"; data: T } | { status: "error"; error: ApiError }>;

async function unwrap<T>(call: () => Typed<T>): Promise<T> {
  let result;
  try {
    result = await call();
  } catch (e) {
    throw toFailure(e);
  }
  if (result.status === "error") throw toFailure(result.error);
  return result.data;
}

export const api = {
  appInfo: async (): Promise<AppInfo> => {
    try {
      return await commands.appInfo();
    } catch (e) {
      throw toFailure(e);
    }
  },
  catalogCards: (query: string, category: string | null, filter: CatalogFilter): Promise<CatalogCard[]> =>
    unwrap(() => commands.catalogCards(query, category, filter)),
  categories: (): Promise<CategoryCount[]> => unwrap(() => commands.categories()),
  /** One window of the marketplace (curated entries first where they match, then registry servers). */
  marketplace: (query: MarketQuery, offset: number, limit: number): Promise<MarketPage> =>
    unwrap(() => commands.marketplace(query, offset, limit)),
  registryStatus: async (): Promise<RegistryStatus> => {
    try {
      return await commands.registryStatus();
    } catch (e) {
      throw toFailure(e);
    }
  },
  /** Start a background sync of the registries (poll `registryStatus` for progress). */
  registrySync: async (full: boolean): Promise<RegistryStatus> => {
    try {
      return await commands.registrySync(full);
    } catch (e) {
      throw toFailure(e);
    }
  },
  /** Read another registry too, then sync it (its servers join the marketplace). */
  addRegistry: (url: string): Promise<RegistryStatus> => unwrap(() => commands.addRegistry(url)),
  /** Stop reading a registry: its servers leave the marketplace. */
  removeRegistry: (url: string): Promise<RegistryStatus> => unwrap(() => commands.removeRegistry(url)),
  installForm: (entryId: string, optionId: string | null): Promise<InstallForm> =>
    unwrap(() => commands.installForm(entryId, optionId)),
  /** The install form of an installed server, filled as it was installed; `null`: edit it in the raw editor. */
  editForm: (name: string): Promise<EditForm | null> => unwrap(() => commands.editForm(name)),
  install: (request: InstallRequest): Promise<ServerView> => unwrap(() => commands.installServer(request)),
  listServers: (): Promise<ServerView[]> => unwrap(() => commands.listServers()),
  serverDetail: (name: string): Promise<ServerDetail> => unwrap(() => commands.serverDetail(name)),
  setEnabled: (name: string, enabled: boolean): Promise<ServerView> =>
    unwrap(() => commands.setEnabled(name, enabled)),
  rename: (name: string, newName: string): Promise<ServerView> => unwrap(() => commands.renameServer(name, newName)),
  remove: (name: string): Promise<RemoveResult> => unwrap(() => commands.removeServer(name)),
  updateCredentials: (name: string, key: string, value: string): Promise<ServerView> =>
    unwrap(() => commands.updateCredentials(name, key, value)),
  customServer: (name: string): Promise<CustomServer> => unwrap(() => commands.customServer(name)),
  saveCustomServer: (original: string | null, server: CustomServer, testId: string | null = null): Promise<ServerView> =>
    unwrap(() => commands.saveCustomServer(original, server, testId)),
  /** The servers in a text pasted into the custom editor (a command line or a JSON snippet). */
  parseCustomPaste: (text: string): Promise<CustomServer[]> => unwrap(() => commands.parseCustomPaste(text)),
  /** A stamp of the config file: it changes whenever the file does. */
  configStamp: async (): Promise<string | null> => {
    try {
      return await commands.configStamp();
    } catch {
      return null;
    }
  },
  openExternal: (url: string): Promise<null> => unwrap(() => commands.openExternal(url)),
  oauthStart: (name: string): Promise<JobStatus> => unwrap(() => commands.oauthStart(name)),
  oauthStatus: (job: string): Promise<JobStatus> => unwrap(() => commands.oauthStatus(job)),
  oauthOpen: (job: string): Promise<null> => unwrap(() => commands.oauthOpen(job)),
  oauthPaste: (job: string, redirectUrl: string): Promise<JobStatus> => unwrap(() => commands.oauthPaste(job, redirectUrl)),
  oauthCancel: (job: string): Promise<JobStatus> => unwrap(() => commands.oauthCancel(job)),
  /** After a sign-in succeeded: a server without auth becomes an OAuth server. */
  oauthComplete: (job: string): Promise<ServerView> => unwrap(() => commands.oauthComplete(job)),
  toolDiff: (name: string): Promise<ToolDiff> => unwrap(() => commands.toolDiff(name)),
  approveTools: (name: string): Promise<ToolDiff> => unwrap(() => commands.approveTools(name)),
  serverSandbox: (name: string): Promise<SandboxPanel> => unwrap(() => commands.serverSandbox(name)),
  /** The gateway's profiles at a glance (`default` first). */
  profiles: (): Promise<ProfileView[]> => unwrap(() => commands.profiles()),
  /** Create a profile (`create`), or make one serve `servers`; every profile after. */
  saveProfile: (name: string, servers: string[], create: boolean): Promise<ProfileView[]> =>
    unwrap(() => commands.saveProfile(name, servers, create)),
  removeProfile: (name: string): Promise<ProfileView[]> => unwrap(() => commands.removeProfile(name)),
  /** The gateways running now, with each server's state. */
  runningGateways: (): Promise<RunningGatewayView[]> => commands.runningGateways(),
  /** Make a profile start its servers on first use, or all at once; every profile after. */
  setProfileLazy: (name: string, lazy: boolean): Promise<ProfileView[]> => unwrap(() => commands.setProfileLazy(name, lazy)),
  setProfileRule: (name: string, rule: string, permission: string | null): Promise<ProfileView[]> =>
    unwrap(() => commands.setProfileRule(name, rule, permission)),
  /** Add a hook to a profile, take one away, or say whether a failing one blocks the call. */
  setProfileHooks: (name: string, change: HooksChange): Promise<ProfileView[]> =>
    unwrap(() => commands.setProfileHooks(name, change)),
  /** The last calls made through gateways, newest first. */
  activity: (server: string | null, last: number): Promise<ActivityView[]> => commands.activity(server, last),
  /** The questions gateways wait on ("may this call run?"), oldest first. */
  gatewayQuestions: (): Promise<GatewayQuestionView[]> => commands.gatewayQuestions(),
  /** Answer one: the call runs when `allow`. */
  answerGatewayQuestion: (id: string, allow: boolean): Promise<null> =>
    unwrap(() => commands.answerGatewayQuestion(id, allow)),
  markClientsSeen: (): Promise<ClientsOverview> => unwrap(() => commands.markClientsSeen()),
  quarantineEntry: (client: string, entry: string): Promise<ImportResultView> =>
    unwrap(() => commands.quarantineEntry(client, entry)),
  removeClientEntry: (client: string, entry: string): Promise<RemovedEntry> =>
    unwrap(() => commands.removeClientEntry(client, entry)),
  setSandbox: (name: string, change: SandboxRequest): Promise<SandboxPanel> =>
    unwrap(() => commands.setSandbox(name, change)),
  serverTools: (name: string): Promise<ServerToolsView> => unwrap(() => commands.serverTools(name)),
  setTools: (name: string, change: ToolsChangeInput): Promise<ToolsChangeResult> =>
    unwrap(() => commands.setTools(name, change)),
  budget: (): Promise<BudgetView> => unwrap(() => commands.budget()),
  clientsOverview: async (): Promise<ClientsOverview> => {
    try {
      return await commands.clientsOverview();
    } catch (e) {
      throw toFailure(e);
    }
  },
  useIn: (name: string): Promise<UseIn> => unwrap(() => commands.useIn(name)),
  exportPreview: (client: string, selection: ExportSelection): Promise<ExportPreview> =>
    unwrap(() => commands.exportPreview(client, selection)),
  exportToClient: (client: string, selection: ExportSelection): Promise<ExportResult> =>
    unwrap(() => commands.exportToClient(client, selection)),
  importPreview: (client: string): Promise<ImportPreview> => unwrap(() => commands.importPreview(client)),
  importFromClient: (client: string, entries: string[], rewriteSource: boolean): Promise<ImportResultView> =>
    unwrap(() => commands.importFromClient(client, entries, rewriteSource)),
  /** What the doctor finds about the machine itself (runtimes, the secret store). */
  doctorMachine: (): Promise<FindingView[]> => unwrap(() => commands.doctorMachine()),
  /** The organisation policy in force (never throws: no policy when it cannot be read). */
  policyStatus: async (): Promise<PolicyView | null> => {
    try {
      return await commands.policyStatus();
    } catch {
      return null;
    }
  },
  /** Open an MCPB bundle file: the entry id of its install form (`bundle:TOKEN`). */
  openBundle: (path: string): Promise<string> => unwrap(() => commands.openBundle(path)),
  /** Close a bundle's install form without installing: its unpacked files are removed. */
  discardBundle: async (entryId: string): Promise<void> => {
    try {
      await commands.discardBundle(entryId);
    } catch {
      // Nothing to remove.
    }
  },
  /** Installed registry servers and whether a newer version is listed. */
  outdated: (): Promise<OutdatedView[]> => unwrap(() => commands.outdated()),
  applyUpdate: (token: string): Promise<ServerView> => unwrap(() => commands.applyUpdate(token)),
  discardUpdate: async (token: string): Promise<void> => {
    try {
      await commands.discardUpdate(token);
    } catch {
      // Nothing to drop.
    }
  },
  /** A native file or folder picker (`file`, `directory`, `bundle`); `null` when cancelled. */
  pickPath: async (kind: "file" | "directory" | "bundle"): Promise<string | null> => {
    try {
      return await commands.pickPath(kind);
    } catch {
      return null;
    }
  },
  /** Tell the shell the UI rendered `mark`; never throws (a lost mark only affects tracing). */
  uiReady: async (mark: string, count: number): Promise<StartupStep | null> => {
    try {
      return await commands.uiReady(mark, count);
    } catch {
      return null;
    }
  },
};

/** A test connection (or a doctor's examination) in progress. */
export interface Running<T> {
  id: string;
  result: Promise<T>;
  cancel: () => Promise<void>;
}
export type RunningTest = Running<TestReport>;

function newTestId(): string {
  return `t-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

function running<T>(id: string, result: Promise<T>): Running<T> {
  return {
    id,
    result,
    cancel: async () => {
      try {
        await commands.cancelTest(id);
      } catch {
        // Already finished.
      }
    },
  };
}

/** The doctor's examination of one installed server (it runs the server once), cancellable. */
export function doctorServer(name: string): Running<ServerDiagnosis> {
  const id = newTestId();
  return running(id, unwrap(() => commands.doctorServer(id, name)));
}

/** Test an installed server; `onProgress` hears each stage start and end. */
export function testServer(name: string, onProgress: (p: StageProgress) => void): RunningTest {
  const id = newTestId();
  const channel = new Channel<StageProgress>();
  channel.onmessage = onProgress;
  return running(id, unwrap(() => commands.testServer(id, name, channel)));
}

/** Test the custom editor's server before saving it. Pass the returned id to `api.saveCustomServer`. */
export function testCustom(original: string | null, server: CustomServer, onProgress: (p: StageProgress) => void): RunningTest {
  const id = newTestId();
  const channel = new Channel<StageProgress>();
  channel.onmessage = onProgress;
  return running(id, unwrap(() => commands.testCustom(id, original, server, channel)));
}

/** Test a filled install form before saving it. Pass the returned id to `api.install`. */
export function testForm(request: InstallRequest, onProgress: (p: StageProgress) => void): RunningTest {
  const id = newTestId();
  const channel = new Channel<StageProgress>();
  channel.onmessage = onProgress;
  return running(id, unwrap(() => commands.testForm(id, request, channel)));
}

/** Open a Try-it session with installed server `name`; `onEvent` hears everything that happens
 * in it (progress, log messages, the server's questions, trace entries) until it is closed. */
export function openSession(name: string, onEvent: (e: SessionEvent) => void): Promise<SessionView> {
  const channel = new Channel<SessionEvent>();
  channel.onmessage = onEvent;
  return unwrap(() => commands.openSession(name, channel));
}

/** The calls of an open Try-it session. */
export const tryit = {
  offer: (session: string): Promise<Offer> => unwrap(() => commands.sessionOffer(session)),
  toolForm: (session: string, tool: string): Promise<ToolForm> => unwrap(() => commands.sessionToolForm(session, tool)),
  validate: (session: string, tool: string, args: Value): Promise<FieldIssue[]> =>
    unwrap(() => commands.sessionValidate(session, tool, args)),
  call: (session: string, input: CallInput): Promise<CallOutcome> => unwrap(() => commands.sessionCall(session, input)),
  cancel: async (session: string, callId: string): Promise<boolean> => {
    try {
      return await commands.sessionCancel(session, callId);
    } catch {
      return false;
    }
  },
  read: (session: string, uri: string, callId: string): Promise<ReadOutcome> => unwrap(() => commands.sessionRead(session, uri, callId)),
  prompt: (session: string, prompt: string, args: Record<string, string>, callId: string): Promise<PromptOutcome> =>
    unwrap(() => commands.sessionPrompt(session, prompt, args, callId)),
  complete: (session: string, target: CompletionTarget, argument: string, value: string, context: Record<string, string>): Promise<Completion> =>
    unwrap(() => commands.sessionComplete(session, target, argument, value, context)),
  answer: (session: string, question: string, answer: Answer): Promise<null> => unwrap(() => commands.sessionAnswer(session, question, answer)),
  setRoots: (session: string, folders: string[]): Promise<RootView[]> => unwrap(() => commands.sessionSetRoots(session, folders)),
  trace: (session: string): Promise<TraceEntry[]> => unwrap(() => commands.sessionTrace(session)),
  expandTemplate: async (template: string, values: Record<string, string>): Promise<string> => {
    try {
      return await commands.expandTemplate(template, values);
    } catch (e) {
      throw toFailure(e);
    }
  },
  close: (session: string): Promise<null> => unwrap(() => commands.closeSession(session)),
  /** A tool's interactive UI (MCP Apps): its page, kept in the core and served to a sandboxed frame. */
  appView: (session: string, tool: string): Promise<AppViewInfo> => unwrap(() => commands.sessionAppView(session, tool)),
  closeAppView: async (viewId: string): Promise<void> => {
    try {
      await commands.closeAppView(viewId);
    } catch {
      // The view is gone with its session anyway.
    }
  },
  diagnostics: (name: string, session: string | null): Promise<string> => unwrap(() => commands.diagnostics(name, session)),
};

/** A new id for a call, to cancel it with. */
export function newCallId(): string {
  return `ui-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Prepare and test `name`'s update (to `to`, or the latest); nothing is saved. Where its
 * secrets would go to a new program, package or host, it fails with `update_new_destination`
 * unless `acceptNewDestination`. */
export function prepareUpdate(
  name: string,
  to: string | null,
  acceptNewDestination: boolean,
  onProgress: (p: StageProgress) => void,
): Promise<UpdatePreview> {
  const channel = new Channel<StageProgress>();
  channel.onmessage = onProgress;
  return unwrap(() => commands.prepareUpdate(name, to, acceptNewDestination, channel));
}

/** Hear the paths of `.mcpb` files dropped on the window. */
export function watchBundleDrops(onDrop: (path: string) => void): void {
  const channel = new Channel<string>();
  channel.onmessage = onDrop;
  commands.watchDrops(channel).catch(() => {
    // Without the shell (tests), nothing is dropped.
  });
}
