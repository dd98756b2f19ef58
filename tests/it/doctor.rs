//! The environment doctor against real processes: a command only the login shell finds, a
//! missing runtime, a server logging to stdout, a server needing an env var, an SSE URL
//! configured as streamable HTTP, a self-signed TLS server, a 401, an unresolvable host.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::fixture::{HttpFixture, fixture_bin, marker};
use crate::support::peers::free_port;
use crate::support::{Home, assert_code, stdout};

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A fake login shell whose PATH is `path`.
fn fake_shell(dir: &Path, path: &str) -> PathBuf {
    script(
        dir,
        "fakesh",
        &format!("#!/bin/sh\nPATH='{path}'\nexport PATH\nshift\nexec /bin/sh -c \"$1\"\n"),
    )
}

fn doctor(home: &Home, name: &str, env: &[(&str, &str)]) -> (Output, Value) {
    let out = home
        .cmd(&["doctor", name, "--json", "--timeout", "20"])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            stdout(&out),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, value)
}

fn finding<'a>(report: &'a Value, code: &str) -> &'a Value {
    report["servers"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {report:#}"))
}

fn add(home: &Home, args: &[&str]) {
    let mut all = vec!["add"];
    all.extend(args);
    let out = home.run(&all);
    assert_code(&out, 0);
}

#[test]
fn a_command_only_on_the_login_shell_path_is_found_and_explained() {
    let home = Home::new();
    let bin = home.path().join("userbin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(fixture_bin(), bin.join("pb-fixture-srv")).unwrap();
    let shell = fake_shell(home.path(), &format!("{}:/usr/bin:/bin", bin.display()));
    add(
        &home,
        &[
            "srv",
            "--no-test",
            "--stdio",
            "--",
            "pb-fixture-srv",
            "--name",
            &marker("doc"),
        ],
    );
    let (out, report) = doctor(
        &home,
        "srv",
        &[
            ("PATH", "/usr/bin:/bin"),
            ("SHELL", shell.to_str().unwrap()),
        ],
    );
    assert_code(&out, 0);
    let f = finding(&report, "command.login_shell_only");
    assert_eq!(f["severity"], "warning");
    let exe = bin.join("pb-fixture-srv");
    assert!(
        f["fix"]
            .as_str()
            .unwrap()
            .contains(&format!("absolute path `{}`", exe.display())),
        "{f:#}"
    );
    assert!(f["message"].as_str().unwrap().contains("desktop"));
    assert_eq!(report["servers"][0]["test"]["ok"], true);
}

#[test]
fn a_missing_runtime_is_named_with_how_to_install_it() {
    let home = Home::new();
    let empty = home.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let shell = fake_shell(home.path(), empty.to_str().unwrap());
    let env = [
        ("PATH", empty.to_str().unwrap()),
        ("SHELL", shell.to_str().unwrap()),
    ];
    add(
        &home,
        &[
            "viaNpx",
            "--no-test",
            "--stdio",
            "--",
            "npx",
            "-y",
            "some-mcp-server",
        ],
    );
    let js = script(
        home.path(),
        "server.js",
        "#!/usr/bin/env node\nconsole.log('hi')\n",
    );
    add(
        &home,
        &[
            "viaScript",
            "--no-test",
            "--stdio",
            "--",
            js.to_str().unwrap(),
        ],
    );

    let (out, report) = doctor(&home, "viaNpx", &env);
    assert_code(&out, 1);
    let f = finding(&report, "runtime.missing");
    assert_eq!(f["severity"], "error");
    assert!(f["message"].as_str().unwrap().contains("Node.js"), "{f:#}");
    assert!(
        f["fix"].as_str().unwrap().contains("install Node.js"),
        "{f:#}"
    );
    assert!(report["servers"][0]["test"].is_null());

    let (out, report) = doctor(&home, "viaScript", &env);
    assert_code(&out, 1);
    let f = finding(&report, "runtime.missing");
    assert!(f["message"].as_str().unwrap().contains("`node`"), "{f:#}");
    assert!(f["fix"].as_str().unwrap().contains("Node.js"), "{f:#}");
}

#[test]
fn a_server_logging_to_stdout_gets_the_stderr_fix() {
    let home = Home::new();
    let fx = fixture_bin();
    add(
        &home,
        &[
            "noisy",
            "--no-test",
            "--timeout",
            "10",
            "--stdio",
            "--",
            fx.to_str().unwrap(),
            "--name",
            &marker("doc"),
            "--misbehave",
            "garbage-stdout",
        ],
    );
    let (out, report) = doctor(&home, "noisy", &[]);
    assert_code(&out, 1);
    let f = finding(&report, "stdio.logs_to_stdout");
    assert_eq!(f["severity"], "error");
    assert!(
        f["fix"]
            .as_str()
            .unwrap()
            .starts_with("MCP stdio servers must log to stderr")
    );
    assert!(f["fix"].as_str().unwrap().contains("--quiet / LOG_LEVEL"));
    assert!(
        f["message"].as_str().unwrap().contains("Starting server"),
        "{f:#}"
    );
    assert_eq!(f["stage"], "initialize");
    // The human form says the same.
    let out = home.run(&["doctor", "noisy"]);
    assert_code(&out, 1);
    assert!(
        stdout(&out).contains("error: stdio.logs_to_stdout"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_server_needing_an_env_var_gets_it_named() {
    let home = Home::new();
    let s = script(
        home.path(),
        "needs-key",
        "#!/bin/sh\necho 'Error: MY_API_KEY environment variable is required' >&2\nexit 1\n",
    );
    add(
        &home,
        &["keyless", "--no-test", "--stdio", "--", s.to_str().unwrap()],
    );
    let (out, report) = doctor(&home, "keyless", &[]);
    assert_code(&out, 1);
    let f = finding(&report, "env.missing_var");
    assert!(
        f["message"].as_str().unwrap().contains("`MY_API_KEY`"),
        "{f:#}"
    );
    assert!(
        f["fix"]
            .as_str()
            .unwrap()
            .contains("plugboard edit keyless --secret-env MY_API_KEY")
    );
    assert_eq!(report["servers"][0]["test"]["error_kind"], "exited");
}

#[test]
fn an_sse_url_configured_as_streamable_http_is_recognised() {
    let home = Home::new();
    let fx = HttpFixture::start("sse", &[]);
    add(
        &home,
        &[
            "legacy",
            "--no-test",
            "--url",
            &fx.url("/sse"),
            "--transport",
            "shttp",
        ],
    );
    let (out, report) = doctor(&home, "legacy", &[]);
    assert_code(&out, 1);
    let f = finding(&report, "remote.sse_only");
    assert!(
        f["fix"]
            .as_str()
            .unwrap()
            .contains("change the transport to sse"),
        "{f:#}"
    );
    assert!(f["fix"].as_str().unwrap().contains("--transport sse"));
}

#[test]
fn a_401_says_how_to_authorize() {
    let home = Home::new();
    let fx = HttpFixture::start("http", &["--expect-bearer", "right-token"]);
    add(
        &home,
        &[
            "locked",
            "--no-test",
            "--url",
            &fx.url("/mcp"),
            "--transport",
            "shttp",
        ],
    );
    let (out, report) = doctor(&home, "locked", &[]);
    assert_code(&out, 1);
    let f = finding(&report, "remote.unauthorized");
    assert!(f["message"].as_str().unwrap().contains("401"), "{f:#}");
    assert!(
        f["fix"].as_str().unwrap().contains("plugboard auth locked"),
        "{f:#}"
    );
}

/// `openssl s_server` with a fresh self-signed certificate on a loopback port; killed on drop.
struct TlsServer {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl TlsServer {
    fn start() -> TlsServer {
        let dir = tempfile::tempdir().unwrap();
        let (key, cert) = (dir.path().join("key.pem"), dir.path().join("cert.pem"));
        let status = Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=localhost",
            ])
            // A leaf certificate (not a CA), as a developer's self-signed server would have.
            .args(["-addext", "basicConstraints=critical,CA:FALSE"])
            .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("openssl");
        assert!(status.success());
        let port = free_port();
        let child = Command::new("openssl")
            .args([
                "s_server",
                "-accept",
                &format!("127.0.0.1:{port}"),
                "-www",
                "-quiet",
            ])
            .arg("-cert")
            .arg(&cert)
            .arg("-key")
            .arg(&key)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("openssl s_server");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "s_server did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        TlsServer {
            child,
            port,
            _dir: dir,
        }
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_self_signed_certificate_is_named() {
    let home = Home::new();
    let tls = TlsServer::start();
    let url = format!("https://127.0.0.1:{}/mcp", tls.port);
    add(
        &home,
        &[
            "selfsigned",
            "--no-test",
            "--url",
            &url,
            "--transport",
            "shttp",
        ],
    );
    let (out, report) = doctor(&home, "selfsigned", &[]);
    assert_code(&out, 1);
    let f = finding(&report, "remote.tls");
    let message = f["message"].as_str().unwrap();
    // Named in words (rustls says BadSignature or UnknownIssuer here), with the raw error.
    assert!(message.contains("self-signed"), "{f:#}");
    assert!(message.contains("invalid peer certificate"), "{f:#}");
    assert!(f["fix"].as_str().unwrap().contains("certificate"));
}

#[test]
fn an_unresolvable_host_is_a_dns_finding() {
    let home = Home::new();
    add(
        &home,
        &[
            "nowhere",
            "--no-test",
            "--url",
            "https://mcp.plugboard-test.invalid/mcp",
            "--transport",
            "shttp",
        ],
    );
    let (out, report) = doctor(&home, "nowhere", &[]);
    assert_code(&out, 1);
    let f = finding(&report, "remote.dns");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("mcp.plugboard-test.invalid"),
        "{f:#}"
    );
}

/// The app's doctor (`plugboard_app_api::api::Api::doctor_server`) against real servers: a command that does
/// not exist, a working fixture, and a fixture that puts its stored token in an error. Findings
/// come per server with codes, fixes and the failing stage, and never carry the secret.
#[test]
fn the_app_doctor_reports_per_server_and_never_shows_a_secret() {
    use plugboard::secrets::{SecretKey, SecretStore, Sensitive};
    use plugboard_app_api::api::{Api, FindingSeverity, Transport};

    const TOKEN: &str = "doctor-Token-5f1e2d-never-shown";
    let dir = tempfile::tempdir().unwrap();
    let fx = fixture_bin();
    let fx = fx.to_str().unwrap();
    let mark = marker("appdoc");
    let missing = format!("pb-no-such-command-{}", std::process::id());
    let config = serde_json::json!({"version": 1, "servers": {
        "missing": {"type": "stdio", "command": missing},
        "works": {"type": "stdio", "command": fx, "args": ["--name", mark]},
        "leaky": {"type": "stdio", "command": fx,
            "args": ["--name", mark, "--misbehave", "leak-secret-env=TOKEN"],
            "env": {"TOKEN": {"secret": "TOKEN"}}},
    }});
    std::fs::write(
        dir.path().join("mcp_config.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
    let store = std::sync::Arc::new(plugboard::secrets::MemoryStore::new());
    store
        .set(
            &SecretKey::new("leaky", "TOKEN"),
            &Sensitive::new(TOKEN.to_owned()),
        )
        .unwrap();
    let api = std::sync::Arc::new(Api::with_store(
        dir.path(),
        store,
        plugboard::catalog::Catalog::default(),
    ));

    // The app examines every server at once, each on its own.
    let names = ["missing", "works", "leaky"];
    let servers: Vec<_> = futures::executor::block_on(futures::future::join_all(
        names
            .iter()
            .map(|n| api.doctor_server_task(format!("d-{n}"), (*n).to_owned())),
    ))
    .into_iter()
    .map(Result::unwrap)
    .collect();
    let json = serde_json::to_string(&servers).unwrap();
    assert!(!json.contains(TOKEN), "the secret crossed: {json}");
    let by_name = |n: &str| {
        servers
            .iter()
            .find(|d| d.name == n)
            .unwrap_or_else(|| panic!("no {n} in {json}"))
    };

    let d = by_name("missing");
    assert_eq!(
        (d.ok, d.tested, d.transport),
        (false, false, Transport::Stdio)
    );
    let f = &d.findings[0];
    assert_eq!(
        (f.code.as_str(), f.severity),
        ("command.not_found", FindingSeverity::Error)
    );
    assert!(f.message.contains(&missing), "{f:?}");
    assert!(f.fix.contains("give the full path"), "{f:?}");

    let d = by_name("works");
    assert!(d.ok && d.tested, "{d:?}");
    assert_eq!(
        (d.error_kind.as_deref(), d.failed_stage.as_deref()),
        (None, None)
    );
    assert!(d.tools.unwrap() > 0);
    assert!(d.findings.iter().any(|f| f.code == "probe.ok"), "{d:?}");

    let d = by_name("leaky");
    assert!(!d.ok && d.tested, "{d:?}");
    assert_eq!(d.failed_stage.as_deref(), Some("tools/list"), "{d:?}");
    let f = &d.findings[0];
    assert_eq!(f.severity, FindingSeverity::Error, "{d:?}");
    assert_eq!(f.stage.as_deref(), Some("tools/list"), "{d:?}");
    assert!(f.message.contains("auth failed for token"), "{f:?}");

    // An unknown name is an error, not an empty report.
    let err = futures::executor::block_on(api.doctor_server_task("d-nope".into(), "nope".into()))
        .unwrap_err();
    assert_eq!(err.code, "not_found");
    crate::support::fixture::assert_no_process_left(&mark);
}

/// The doctor shows no stderr under its findings, so a failed start quotes the server's last
/// stderr lines in the finding itself, and its fix does not point "below" at nothing.
#[test]
fn a_failed_start_quotes_its_last_stderr_lines_in_the_finding() {
    let home = Home::new();
    add(
        &home,
        &[
            "--stdio",
            "--no-test",
            "crashy",
            "--",
            "sh",
            "-c",
            "echo starting >&2; echo 'fatal: config file /etc/crashy.toml is unreadable' >&2; exit 3",
        ],
    );
    let (_, report) = doctor(&home, "crashy", &[]);
    let f = finding(&report, "probe.exited");
    let message = f["message"].as_str().unwrap();
    assert!(message.contains("/etc/crashy.toml is unreadable"), "{f}");
    assert!(!f["fix"].as_str().unwrap().contains("below"), "{f}");
}
