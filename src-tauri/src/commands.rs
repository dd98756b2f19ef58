//! The app's Tauri commands. Each is one call into the core's app API (`plugboard_app_api::api`): no
//! logic lives here. Errors reach the UI as `ApiError {code, message, fields}`, already scrubbed.
//!
//! Commands run on the async runtime (`async`), never on the UI thread; tests run on a thread
//! of their own (see `plugboard_app_api::api::Api::test_server_task`).

use plugboard_app_api::api::app_views::AppViewInfo;
use plugboard_app_api::api::{
    ActivityView, FindingView, GatewayQuestionView, HooksChange, ProfileView, RemovedEntry,
    RunningGatewayView, SandboxPanel, SandboxRequest, ServerDiagnosis,
};
use plugboard_app_api::api::{
    Api, ApiError, AppInfo, CallInput, CatalogCard, CatalogFilter, CategoryCount, ClientsOverview,
    CustomServer, EditForm, ExportPreview, ExportResult, ExportSelection, ImportPreview,
    ImportResultView, InstallForm, InstallRequest, JobStatus, MarketPage, MarketQuery,
    OutdatedView, PolicyView, RegistryStatus, RemoveResult, ServerDetail, ServerView, SessionView,
    StageProgress, StartupStep, TestReport, ToolDiff, ToolForm, UpdatePreview, UseIn,
};
use plugboard_app_api::api::{BudgetView, ServerToolsView, ToolsChangeInput, ToolsChangeResult};
use plugboard_ops::session::{
    Answer, CallOutcome, Completion, CompletionTarget, Offer, PromptOutcome, ReadOutcome, RootView,
    SessionEvent, TraceEntry,
};
use plugboard_wire::schema::FieldIssue;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

use tauri::State;
use tauri::ipc::Channel;

type Res<T> = Result<T, ApiError>;

#[tauri::command(async)]
#[specta::specta]
pub fn app_info(api: State<'_, Arc<Api>>) -> AppInfo {
    api.app_info()
}

#[tauri::command(async)]
#[specta::specta]
pub fn catalog_cards(
    api: State<'_, Arc<Api>>,
    query: String,
    category: Option<String>,
    filter: CatalogFilter,
) -> Res<Vec<CatalogCard>> {
    api.catalog_cards(&query, category.as_deref(), filter)
}

/// One window of the marketplace (curated entries and registry servers) for `query`.
#[tauri::command(async)]
#[specta::specta]
pub fn marketplace(
    api: State<'_, Arc<Api>>,
    query: MarketQuery,
    offset: u32,
    limit: u32,
) -> Res<MarketPage> {
    api.marketplace(&query, offset, limit)
}

#[tauri::command(async)]
#[specta::specta]
pub fn registry_status(api: State<'_, Arc<Api>>) -> RegistryStatus {
    api.registry_status()
}

/// Start a background sync of the registries; poll `registry_status` for its progress.
#[tauri::command(async)]
#[specta::specta]
pub fn registry_sync(api: State<'_, Arc<Api>>, full: bool) -> RegistryStatus {
    api.registry_sync(full)
}

/// Read another registry too, then sync it.
#[tauri::command(async)]
#[specta::specta]
pub fn add_registry(api: State<'_, Arc<Api>>, url: String) -> Res<RegistryStatus> {
    api.add_registry(&url)
}

/// Stop reading a registry: its servers leave the marketplace.
#[tauri::command(async)]
#[specta::specta]
pub fn remove_registry(api: State<'_, Arc<Api>>, url: String) -> Res<RegistryStatus> {
    api.remove_registry(&url)
}

#[tauri::command(async)]
#[specta::specta]
pub fn categories(api: State<'_, Arc<Api>>) -> Res<Vec<CategoryCount>> {
    api.categories()
}

#[tauri::command(async)]
#[specta::specta]
pub fn install_form(
    api: State<'_, Arc<Api>>,
    entry_id: String,
    option_id: Option<String>,
) -> Res<InstallForm> {
    api.install_form(&entry_id, option_id.as_deref())
}

/// The install form of installed server `name`, filled as it was installed (`null`: edit it in
/// the raw editor).
#[tauri::command(async)]
#[specta::specta]
pub fn edit_form(api: State<'_, Arc<Api>>, name: String) -> Res<Option<EditForm>> {
    api.edit_form(&name)
}

#[tauri::command(async)]
#[specta::specta]
pub fn install_server(api: State<'_, Arc<Api>>, request: InstallRequest) -> Res<ServerView> {
    api.install(&request)
}

#[tauri::command(async)]
#[specta::specta]
pub fn list_servers(api: State<'_, Arc<Api>>) -> Res<Vec<ServerView>> {
    api.list_servers()
}

#[tauri::command(async)]
#[specta::specta]
pub fn server_detail(api: State<'_, Arc<Api>>, name: String) -> Res<ServerDetail> {
    api.server_detail(&name)
}

#[tauri::command(async)]
#[specta::specta]
pub fn set_enabled(api: State<'_, Arc<Api>>, name: String, enabled: bool) -> Res<ServerView> {
    api.set_enabled(&name, enabled)
}

#[tauri::command(async)]
#[specta::specta]
pub fn rename_server(api: State<'_, Arc<Api>>, name: String, new_name: String) -> Res<ServerView> {
    api.rename(&name, &new_name)
}

#[tauri::command(async)]
#[specta::specta]
pub fn remove_server(api: State<'_, Arc<Api>>, name: String) -> Res<RemoveResult> {
    api.remove(&name)
}

/// `value` travels UI → core only; the answer says only that the credential is now set.
#[tauri::command(async)]
#[specta::specta]
pub fn update_credentials(
    api: State<'_, Arc<Api>>,
    name: String,
    key: String,
    value: String,
) -> Res<ServerView> {
    api.update_credentials(&name, &key, &value)
}

#[tauri::command(async)]
#[specta::specta]
pub fn custom_server(api: State<'_, Arc<Api>>, name: String) -> Res<CustomServer> {
    api.custom_server(&name)
}

#[tauri::command(async)]
#[specta::specta]
pub fn save_custom_server(
    api: State<'_, Arc<Api>>,
    original: Option<String>,
    server: CustomServer,
    test_id: Option<String>,
) -> Res<ServerView> {
    api.save_custom_server(original.as_deref(), &server, test_id.as_deref())
}

/// Test the custom editor's server before saving it (typed secrets stay in memory).
#[tauri::command]
#[specta::specta]
pub async fn test_custom(
    api: State<'_, Arc<Api>>,
    test_id: String,
    original: Option<String>,
    server: CustomServer,
    on_progress: Channel<StageProgress>,
) -> Res<TestReport> {
    api.test_custom_task(test_id, original, server, move |p| {
        drop(on_progress.send(p))
    })
    .await
}

/// The servers in a text pasted into the custom editor (a command line or a JSON snippet).
#[tauri::command(async)]
#[specta::specta]
pub fn parse_custom_paste(api: State<'_, Arc<Api>>, text: String) -> Res<Vec<CustomServer>> {
    api.parse_custom_paste(&text)
}

/// A stamp of the config file, to notice changes made outside the app.
#[tauri::command(async)]
#[specta::specta]
pub fn config_stamp(api: State<'_, Arc<Api>>) -> String {
    api.config_stamp()
}

/// Open an https link (docs, help) in the user's browser.
#[tauri::command(async)]
#[specta::specta]
pub fn open_external(url: String) -> Res<()> {
    plugboard_app_api::api::open_external(&url)
}

/// Test an installed server; every stage start and end is sent on `on_progress`. The result
/// becomes the server's health. Cancel it with `cancel_test(test_id)`.
#[tauri::command]
#[specta::specta]
pub async fn test_server(
    api: State<'_, Arc<Api>>,
    test_id: String,
    name: String,
    on_progress: Channel<StageProgress>,
) -> Res<TestReport> {
    api.test_server_task(test_id, name, move |p| drop(on_progress.send(p)))
        .await
}

/// Test a filled install form before saving (secrets stay in memory).
#[tauri::command]
#[specta::specta]
pub async fn test_form(
    api: State<'_, Arc<Api>>,
    test_id: String,
    request: InstallRequest,
    on_progress: Channel<StageProgress>,
) -> Res<TestReport> {
    api.test_form_task(test_id, request, move |p| drop(on_progress.send(p)))
        .await
}

#[tauri::command(async)]
#[specta::specta]
pub fn cancel_test(api: State<'_, Arc<Api>>, test_id: String) -> bool {
    api.cancel_test(&test_id)
}

/// Start an OAuth sign-in of server `name`; poll it with `oauth_status`.
#[tauri::command(async)]
#[specta::specta]
pub fn oauth_start(api: State<'_, Arc<Api>>, name: String) -> Res<JobStatus> {
    api.oauth_start(&name)
}

#[tauri::command(async)]
#[specta::specta]
pub fn oauth_status(api: State<'_, Arc<Api>>, job: String) -> Res<JobStatus> {
    api.oauth_status(&job)
}

/// Open the job's (core-validated) authorization URL in the browser.
#[tauri::command(async)]
#[specta::specta]
pub fn oauth_open(api: State<'_, Arc<Api>>, job: String) -> Res<()> {
    api.oauth_open(&job)
}

/// Complete a sign-in with the URL the browser was redirected to.
#[tauri::command]
#[specta::specta]
pub async fn oauth_paste(
    api: State<'_, Arc<Api>>,
    job: String,
    redirect_url: String,
) -> Res<JobStatus> {
    api.oauth_paste(&job, &redirect_url).await
}

/// After a sign-in succeeded: a server without auth becomes an OAuth server.
#[tauri::command(async)]
#[specta::specta]
pub fn oauth_complete(api: State<'_, Arc<Api>>, job: String) -> Res<ServerView> {
    api.oauth_complete(&job)
}

#[tauri::command(async)]
#[specta::specta]
pub fn oauth_cancel(api: State<'_, Arc<Api>>, job: String) -> Res<JobStatus> {
    api.oauth_cancel(&job)
}

/// How the last seen tools of `name` differ from the approved ones.
#[tauri::command(async)]
#[specta::specta]
pub fn tool_diff(api: State<'_, Arc<Api>>, name: String) -> Res<ToolDiff> {
    api.tool_diff(&name)
}

/// Approve the last seen tools of `name` (what `tool_diff` showed).
#[tauri::command(async)]
#[specta::specta]
pub fn approve_tools(api: State<'_, Arc<Api>>, name: String) -> Res<ToolDiff> {
    api.approve_tools(&name)
}

/// Record the other entries of the clients' files as seen (the user looked at them).
#[tauri::command(async)]
#[specta::specta]
pub fn mark_clients_seen(api: State<'_, Arc<Api>>) -> Res<ClientsOverview> {
    api.mark_clients_seen()
}

/// Import one entry of a client's file in quarantine (disabled, sandboxed, not started).
#[tauri::command(async)]
#[specta::specta]
pub fn quarantine_entry(
    api: State<'_, Arc<Api>>,
    client: String,
    entry: String,
) -> Res<ImportResultView> {
    api.quarantine_entry(&client, &entry)
}

/// Take one entry out of a client's file (a backup beside it).
#[tauri::command(async)]
#[specta::specta]
pub fn remove_client_entry(
    api: State<'_, Arc<Api>>,
    client: String,
    entry: String,
) -> Res<RemovedEntry> {
    api.remove_client_entry(&client, &entry)
}

/// Every gateway profile at a glance.
#[tauri::command(async)]
#[specta::specta]
pub fn profiles(api: State<'_, Arc<Api>>) -> Res<Vec<ProfileView>> {
    api.profiles()
}

/// Create profile `name` (`create`), or make it serve `servers`; every profile after.
#[tauri::command(async)]
#[specta::specta]
pub fn save_profile(
    api: State<'_, Arc<Api>>,
    name: String,
    servers: Vec<String>,
    create: bool,
) -> Res<Vec<ProfileView>> {
    api.save_profile(&name, &servers, create)
}

/// Remove profile `name`; every profile after.
#[tauri::command(async)]
#[specta::specta]
pub fn remove_profile(api: State<'_, Arc<Api>>, name: String) -> Res<Vec<ProfileView>> {
    api.remove_profile(&name)
}

/// The last `last` calls made through gateways (of `server` only), newest first.
#[tauri::command(async)]
#[specta::specta]
pub fn activity(api: State<'_, Arc<Api>>, server: Option<String>, last: u32) -> Vec<ActivityView> {
    api.activity(server.as_deref(), last)
}

/// The gateways running now, with each server's state.
#[tauri::command(async)]
#[specta::specta]
pub fn running_gateways(api: State<'_, Arc<Api>>) -> Vec<RunningGatewayView> {
    api.running_gateways()
}

/// Make a profile start its servers on first use (`lazy`) or all at once.
#[tauri::command(async)]
#[specta::specta]
pub fn set_profile_lazy(
    api: State<'_, Arc<Api>>,
    name: String,
    lazy: bool,
) -> Res<Vec<ProfileView>> {
    api.set_profile_lazy(&name, lazy)
}

/// Give a profile the rule `rule` with `permission` (`allow`, `ask`, `deny`, `hide`), or
/// (`null`) take it away; every profile after.
#[tauri::command(async)]
#[specta::specta]
pub fn set_profile_rule(
    api: State<'_, Arc<Api>>,
    name: String,
    rule: String,
    permission: Option<String>,
) -> Res<Vec<ProfileView>> {
    api.set_profile_rule(&name, &rule, permission.as_deref())
}

/// Change a profile's hooks (one added, one taken away, whether a failing one blocks the
/// call); every profile after.
#[tauri::command(async)]
#[specta::specta]
pub fn set_profile_hooks(
    api: State<'_, Arc<Api>>,
    name: String,
    change: HooksChange,
) -> Res<Vec<ProfileView>> {
    api.set_profile_hooks(&name, change)
}

/// The questions gateways wait on now ("may this call run?"), oldest first.
#[tauri::command(async)]
#[specta::specta]
pub fn gateway_questions(api: State<'_, Arc<Api>>) -> Vec<GatewayQuestionView> {
    api.gateway_questions()
}

/// Answer a gateway's question: the call runs when `allow`.
#[tauri::command(async)]
#[specta::specta]
pub fn answer_gateway_question(api: State<'_, Arc<Api>>, id: String, allow: bool) -> Res<()> {
    api.answer_gateway_question(&id, allow)
}

/// What server `name` may touch, and whether the kernel enforces it.
#[tauri::command(async)]
#[specta::specta]
pub fn server_sandbox(api: State<'_, Arc<Api>>, name: String) -> Res<SandboxPanel> {
    api.server_sandbox(&name)
}

/// Change server `name`'s sandbox (nothing saved when it cannot be enforced as asked).
#[tauri::command(async)]
#[specta::specta]
pub fn set_sandbox(
    api: State<'_, Arc<Api>>,
    name: String,
    change: SandboxRequest,
) -> Res<SandboxPanel> {
    api.set_sandbox(&name, change)
}

/// The MCP clients on this machine and the Plugboard servers each launches.
#[tauri::command(async)]
#[specta::specta]
pub fn clients_overview(api: State<'_, Arc<Api>>) -> ClientsOverview {
    api.clients_overview()
}

/// Which clients launch server `name`.
#[tauri::command(async)]
#[specta::specta]
pub fn use_in(api: State<'_, Arc<Api>>, name: String) -> Res<UseIn> {
    api.use_in(&name)
}

/// What writing the chosen servers into client `client`'s file would change.
#[tauri::command(async)]
#[specta::specta]
pub fn export_preview(
    api: State<'_, Arc<Api>>,
    client: String,
    selection: ExportSelection,
) -> Res<ExportPreview> {
    api.export_preview(&client, &selection)
}

/// Write launchers for the chosen enabled servers into client `client`'s file (with a backup).
#[tauri::command(async)]
#[specta::specta]
pub fn export_to_client(
    api: State<'_, Arc<Api>>,
    client: String,
    selection: ExportSelection,
) -> Res<ExportResult> {
    api.export_to_client(&client, &selection)
}

/// The servers in client `client`'s file that could be imported.
#[tauri::command(async)]
#[specta::specta]
pub fn import_preview(api: State<'_, Arc<Api>>, client: String) -> Res<ImportPreview> {
    api.import_preview(&client)
}

/// Import entries of client `client`'s file (plaintext secrets into the keyring).
#[tauri::command(async)]
#[specta::specta]
pub fn import_from_client(
    api: State<'_, Arc<Api>>,
    client: String,
    entries: Vec<String>,
    rewrite_source: bool,
) -> Res<ImportResultView> {
    api.import_from_client(&client, &entries, rewrite_source)
}

/// Run the environment doctor on installed server `name` (the app runs one per server at
/// once). It runs the server, so it works on a thread of its own like a test; cancel it with
/// `cancel_test(run_id)`.
#[tauri::command]
#[specta::specta]
pub async fn doctor_server(
    api: State<'_, Arc<Api>>,
    run_id: String,
    name: String,
) -> Res<ServerDiagnosis> {
    api.doctor_server_task(run_id, name).await
}

/// What the doctor finds about the machine itself (runtimes, the secret store).
#[tauri::command]
#[specta::specta]
pub async fn doctor_machine(api: State<'_, Arc<Api>>) -> Res<Vec<FindingView>> {
    api.doctor_machine_task().await
}

/// The UI rendered `mark` (`marketplace-ready`, `installed-ready`) with `count` items: traced
/// to stderr when `PLUGBOARD_STARTUP_TRACE=1` (see `plugboard_app_api::api::startup`).
#[tauri::command(async)]
#[specta::specta]
pub fn ui_ready(mark: String, count: u32) -> Option<StartupStep> {
    plugboard_app_api::api::startup::ui_ready(&mark, count)
}

/// The organisation policy in force.
#[tauri::command(async)]
#[specta::specta]
pub fn policy_status(api: State<'_, Arc<Api>>) -> PolicyView {
    api.policy_status()
}

/// Open an MCPB bundle file for install: its form's entry id (`bundle:TOKEN`).
#[tauri::command(async)]
#[specta::specta]
pub fn open_bundle(api: State<'_, Arc<Api>>, path: String) -> Res<String> {
    api.open_bundle(&path)
}

/// Close a bundle's install form without installing (its unpacked files are removed).
#[tauri::command(async)]
#[specta::specta]
pub fn discard_bundle(api: State<'_, Arc<Api>>, entry_id: String) -> bool {
    api.discard_bundle(&entry_id)
}

/// Installed registry servers and whether a newer version is listed.
#[tauri::command(async)]
#[specta::specta]
pub fn outdated(api: State<'_, Arc<Api>>) -> Res<Vec<OutdatedView>> {
    api.outdated()
}

/// Prepare and test an update (nothing is saved).
#[tauri::command]
#[specta::specta]
pub async fn prepare_update(
    api: State<'_, Arc<Api>>,
    name: String,
    to: Option<String>,
    accept_new_destination: bool,
    on_progress: Channel<StageProgress>,
) -> Res<UpdatePreview> {
    api.prepare_update_task(name, to, accept_new_destination, move |p| {
        drop(on_progress.send(p))
    })
    .await
}

/// A server's tools from its last test: state, hints, cost.
#[tauri::command(async)]
#[specta::specta]
pub fn server_tools(api: State<'_, Arc<Api>>, name: String) -> Res<ServerToolsView> {
    api.server_tools(&name)
}

#[tauri::command(async)]
#[specta::specta]
pub fn set_tools(
    api: State<'_, Arc<Api>>,
    name: String,
    change: ToolsChangeInput,
) -> Res<ToolsChangeResult> {
    api.set_tools(&name, &change)
}

#[tauri::command(async)]
#[specta::specta]
pub fn budget(api: State<'_, Arc<Api>>) -> Res<BudgetView> {
    api.budget()
}

#[tauri::command(async)]
#[specta::specta]
pub fn apply_update(api: State<'_, Arc<Api>>, token: String) -> Res<ServerView> {
    api.apply_update(&token)
}

#[tauri::command(async)]
#[specta::specta]
pub fn discard_update(api: State<'_, Arc<Api>>, token: String) -> bool {
    api.discard_update(&token)
}

/// A native picker: `file`, `directory` or `bundle` (an `.mcpb` file). `None` when cancelled.
/// It is asked for from a thread of its own: the dialog itself is run by the window's GTK loop.
#[tauri::command]
#[specta::specta]
pub async fn pick_path(kind: String) -> Option<String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let dialog = rfd::FileDialog::new();
        let path = match kind.as_str() {
            "directory" => dialog.pick_folder(),
            "bundle" => dialog.add_filter("MCPB bundle", &["mcpb"]).pick_file(),
            _ => dialog.pick_file(),
        };
        let _ = tx.send(path);
    });
    rx.await.ok().flatten().map(|p| p.display().to_string())
}

/// Bundle files dropped on the window, sent to the UI as they come.
#[derive(Default)]
pub struct Drops(pub std::sync::Mutex<Option<Channel<String>>>);

/// Receive the paths of `.mcpb` files dropped on the window.
#[tauri::command(async)]
#[specta::specta]
pub fn watch_drops(drops: State<'_, Drops>, on_drop: Channel<String>) {
    *drops.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(on_drop);
}

/// Open a Try-it session with server `name`. Everything that happens in it until it is closed
/// (progress, log messages, the server's questions, trace entries) is sent on `on_event`.
#[tauri::command]
#[specta::specta]
pub async fn open_session(
    api: State<'_, Arc<Api>>,
    name: String,
    on_event: Channel<SessionEvent>,
) -> Res<SessionView> {
    api.open_session_task(name, move |e| drop(on_event.send(e)))
        .await
}

/// What the session's server offers now (after a `list_changed` event).
#[tauri::command(async)]
#[specta::specta]
pub fn session_offer(api: State<'_, Arc<Api>>, session: String) -> Res<Offer> {
    api.session_offer(&session)
}

/// The form generated from `tool`'s input schema.
#[tauri::command(async)]
#[specta::specta]
pub fn session_tool_form(api: State<'_, Arc<Api>>, session: String, tool: String) -> Res<ToolForm> {
    api.session_tool_form(&session, &tool)
}

/// The core's validation of `args` for `tool`, field by field.
#[tauri::command(async)]
#[specta::specta]
pub fn session_validate(
    api: State<'_, Arc<Api>>,
    session: String,
    tool: String,
    args: Value,
) -> Res<Vec<FieldIssue>> {
    api.session_validate(&session, &tool, &args)
}

#[tauri::command]
#[specta::specta]
pub async fn session_call(
    api: State<'_, Arc<Api>>,
    session: String,
    input: CallInput,
) -> Res<CallOutcome> {
    api.session_call_task(session, input).await
}

#[tauri::command(async)]
#[specta::specta]
pub fn session_cancel(api: State<'_, Arc<Api>>, session: String, call_id: String) -> bool {
    api.session_cancel(&session, &call_id)
}

#[tauri::command]
#[specta::specta]
pub async fn session_read(
    api: State<'_, Arc<Api>>,
    session: String,
    uri: String,
    call_id: String,
) -> Res<ReadOutcome> {
    api.session_read_task(session, uri, call_id).await
}

/// Read the page of a tool's interactive UI (MCP Apps) for a sandboxed frame.
#[tauri::command]
#[specta::specta]
pub async fn session_app_view(
    api: State<'_, Arc<Api>>,
    session: String,
    tool: String,
) -> Res<AppViewInfo> {
    api.session_app_view_task(session, tool).await
}

#[tauri::command(async)]
#[specta::specta]
pub fn close_app_view(api: State<'_, Arc<Api>>, view_id: String) {
    api.close_app_view(&view_id)
}

#[tauri::command]
#[specta::specta]
pub async fn session_prompt(
    api: State<'_, Arc<Api>>,
    session: String,
    prompt: String,
    args: BTreeMap<String, String>,
    call_id: String,
) -> Res<PromptOutcome> {
    api.session_prompt_task(session, prompt, args, call_id)
        .await
}

#[tauri::command]
#[specta::specta]
pub async fn session_complete(
    api: State<'_, Arc<Api>>,
    session: String,
    target: CompletionTarget,
    argument: String,
    value: String,
    context: BTreeMap<String, String>,
) -> Res<Completion> {
    api.session_complete_task(session, target, argument, value, context)
        .await
}

/// The user's answer to the server's question; an accepted form is checked first.
#[tauri::command(async)]
#[specta::specta]
pub fn session_answer(
    api: State<'_, Arc<Api>>,
    session: String,
    question: String,
    answer: Answer,
) -> Res<()> {
    api.session_answer(&session, &question, answer)
}

/// Share these folders with the session's server as its roots.
#[tauri::command]
#[specta::specta]
pub async fn session_set_roots(
    api: State<'_, Arc<Api>>,
    session: String,
    folders: Vec<String>,
) -> Res<Vec<RootView>> {
    api.session_set_roots_task(session, folders).await
}

#[tauri::command(async)]
#[specta::specta]
pub fn session_trace(api: State<'_, Arc<Api>>, session: String) -> Res<Vec<TraceEntry>> {
    api.session_trace(&session)
}

/// The URI a resource template makes with these values.
#[tauri::command(async)]
#[specta::specta]
pub fn expand_template(
    api: State<'_, Arc<Api>>,
    template: String,
    values: BTreeMap<String, String>,
) -> String {
    api.expand_template(&template, &values)
}

#[tauri::command]
#[specta::specta]
pub async fn close_session(api: State<'_, Arc<Api>>, session: String) -> Res<()> {
    api.close_session_task(session).await
}

/// A redacted diagnostics bundle of server `name` (of the open `session`, when given).
#[tauri::command]
#[specta::specta]
pub async fn diagnostics(
    api: State<'_, Arc<Api>>,
    name: String,
    session: Option<String>,
) -> Res<String> {
    api.diagnostics_task(name, session).await
}
