//! MCPB bundles for the tests: the fixture bundle servers in `tests/bundles/` packed by the
//! official packer (`mcpb pack` from npm `@anthropic-ai/mcpb`, installed by scripts/setup),
//! hostile zips written by hand, and a loopback HTTPS file server whose test CA the CLI is told
//! to trust (`SSL_CERT_FILE`), stopped when dropped.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `tests/bundles/node_modules/.bin/mcpb`.
pub fn packer() -> PathBuf {
    let bin = super::repo_root().join("tests/bundles/node_modules/.bin/mcpb");
    assert!(
        bin.exists(),
        "{} is missing: run scripts/setup, which installs the official MCPB packer",
        bin.display()
    );
    bin
}

/// A fixture bundle's source copied to a temp dir, changed by `tweak`, packed into
/// `<temp>/<name>.mcpb` by the official packer. The temp dir lives as long as the result.
pub struct Packed {
    pub dir: tempfile::TempDir,
    pub file: PathBuf,
}

impl Packed {
    pub fn sha256(&self) -> String {
        plugboard::mcpb::fetch::sha256_file(&self.file).expect("hash the bundle")
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Edit the JSON file `path` in place.
pub fn edit_json(path: &Path, change: impl FnOnce(&mut serde_json::Value)) {
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    change(&mut value);
    std::fs::write(path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
}

/// Pack fixture `name` (`node-server`, `python-server`) after `tweak` changed its copy.
pub fn pack(name: &str, tweak: impl FnOnce(&Path)) -> Packed {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    copy_dir(&super::repo_root().join("tests/bundles").join(name), &src);
    tweak(&src);
    let file = dir.path().join(format!("{name}.mcpb"));
    let out = Command::new(packer())
        .arg("pack")
        .arg(&src)
        .arg(&file)
        .stdin(Stdio::null())
        .output()
        .expect("run mcpb pack");
    assert!(
        out.status.success() && file.exists(),
        "mcpb pack failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Packed { dir, file }
}

/// The Node fixture at `version`, listing `tools` (and failing at start when `fail`).
pub fn notes_bundle(version: &str, tools: &[&str], fail: bool) -> Packed {
    pack("node-server", |src| {
        edit_json(&src.join("manifest.json"), |m| {
            m["version"] = version.into()
        });
        std::fs::write(
            src.join("tools.json"),
            serde_json::json!({"version": version, "tools": tools, "fail": fail}).to_string(),
        )
        .unwrap();
    })
}

/// A zip written entry by entry (names as given, not checked), deflated.
pub fn raw_zip(path: &Path, entries: &[(&str, &[u8])]) {
    let mut w = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    for (name, data) in entries {
        w.start_file(*name, opts).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap();
}

fn openssl(args: &[&str], dir: &Path) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run openssl (scripts/setup installs it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A loopback HTTP(S) server of the files in its directory.
pub struct FileServer {
    child: Child,
    pub port: u16,
    pub root: tempfile::TempDir,
    /// The test CA the HTTPS server's certificate is signed by (`None` for plain HTTP).
    pub ca: Option<PathBuf>,
    https: bool,
}

const SERVE: &str = r#"
import functools, http.server, ssl, sys
root, cert, key = sys.argv[1], sys.argv[2], sys.argv[3]
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
if cert:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
print(f"PORT={server.server_address[1]}", flush=True)
server.serve_forever()
"#;

impl FileServer {
    /// Serve over HTTPS with a certificate for 127.0.0.1 from a fresh test CA.
    pub fn https() -> FileServer {
        FileServer::start(true)
    }

    /// Serve over plain HTTP.
    pub fn http() -> FileServer {
        FileServer::start(false)
    }

    fn start(https: bool) -> FileServer {
        let root = tempfile::tempdir().unwrap();
        let certs = root.path().join(".certs");
        std::fs::create_dir(&certs).unwrap();
        let (cert, key, ca) = if https {
            let ec = [
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
            ];
            let mut ca_args = vec!["req", "-x509"];
            ca_args.extend(ec);
            ca_args.extend([
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=Plugboard test CA",
            ]);
            openssl(&ca_args, &certs);
            let mut leaf = vec!["req"];
            leaf.extend(ec);
            leaf.extend([
                "-keyout",
                "leaf.key",
                "-out",
                "leaf.csr",
                "-subj",
                "/CN=127.0.0.1",
            ]);
            openssl(&leaf, &certs);
            std::fs::write(
                certs.join("ext"),
                "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
            )
            .unwrap();
            openssl(
                &[
                    "x509",
                    "-req",
                    "-in",
                    "leaf.csr",
                    "-CA",
                    "ca.pem",
                    "-CAkey",
                    "ca.key",
                    "-CAcreateserial",
                    "-out",
                    "leaf.pem",
                    "-days",
                    "2",
                    "-extfile",
                    "ext",
                ],
                &certs,
            );
            (
                certs.join("leaf.pem").display().to_string(),
                certs.join("leaf.key").display().to_string(),
                Some(certs.join("ca.pem")),
            )
        } else {
            (String::new(), String::new(), None)
        };
        let mut child = Command::new("python3")
            .args(["-c", SERVE])
            .arg(root.path())
            .args([&cert, &key])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            while let Some(Ok(line)) = lines.next() {
                if let Some(port) = line.strip_prefix("PORT=") {
                    let _ = tx.send(port.trim().parse::<u16>().ok());
                    break;
                }
            }
        });
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(Some(port)) => FileServer {
                child,
                port,
                root,
                ca,
                https,
            },
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the file server did not start");
            }
        }
    }

    /// Put `file` in the served directory as `name`; its URL.
    pub fn publish(&self, file: &Path, name: &str) -> String {
        std::fs::copy(file, self.root.path().join(name)).unwrap();
        self.url(name)
    }

    pub fn url(&self, name: &str) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}/{name}", self.port)
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A registry row publishing `url` (digest `sha256`) as an MCPB package of `name` `version`.
pub fn mcpb_row(name: &str, version: &str, url: &str, sha256: Option<&str>) -> serde_json::Value {
    let mut package = serde_json::json!({
        "registryType": "mcpb", "identifier": url, "transport": {"type": "stdio"}
    });
    if let Some(sha) = sha256 {
        package["fileSha256"] = sha.into();
    }
    serde_json::json!({"server": {
        "name": name, "version": version, "description": "A test bundle server",
        "packages": [package]
    }})
}
