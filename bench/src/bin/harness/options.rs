//! The harness's command line: which sections to measure, how many rounds, where to write the
//! results, and which clients, servers, plugboard variants and app binary take part.

use std::path::PathBuf;

pub struct Options {
    pub root: PathBuf,
    pub runs: usize,
    pub warmup: usize,
    only: Option<Vec<String>>,
    pub out: PathBuf,
    /// Extra plugboard binaries (`NAME=PATH`), measured as client `plugboard@NAME`.
    pub variants: Vec<(String, PathBuf)>,
    clients: Option<Vec<String>>,
    servers: Option<Vec<String>>,
    /// The app binary the app section starts (default: the release build, else the debug one).
    pub app: Option<PathBuf>,
}

impl Options {
    /// The options of this process's command line (see the crate docs for the flags).
    pub fn from_args() -> Result<Options, String> {
        let mut options = Options {
            root: std::env::current_dir().map_err(|e| e.to_string())?,
            runs: 10,
            warmup: 2,
            only: None,
            out: PathBuf::new(),
            variants: vec![],
            clients: None,
            servers: None,
            app: None,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut value = || args.next().ok_or(format!("{arg} needs a value"));
            match arg.as_str() {
                "--root" => options.root = PathBuf::from(value()?),
                "--runs" => options.runs = value()?.parse().map_err(|_| "--runs: a number")?,
                "--warmup" => {
                    options.warmup = value()?.parse().map_err(|_| "--warmup: a number")?
                }
                "--only" => options.only = Some(comma_list(&value()?)),
                "--out" => options.out = PathBuf::from(value()?),
                "--variant" => {
                    let v = value()?;
                    let (name, path) = v.split_once('=').ok_or("--variant NAME=PATH")?;
                    options
                        .variants
                        .push((name.to_owned(), PathBuf::from(path)));
                }
                "--clients" => options.clients = Some(comma_list(&value()?)),
                "--servers" => options.servers = Some(comma_list(&value()?)),
                "--app" => options.app = Some(PathBuf::from(value()?)),
                other => return Err(format!("unknown argument {other}")),
            }
        }
        if options.out.as_os_str().is_empty() {
            options.out = options.root.join("target/bench/results.json");
        }
        Ok(options)
    }

    /// Whether `section` is measured (`--only`).
    pub fn wants_section(&self, section: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|s| s == section))
    }

    /// Whether client `name` is measured (`--clients`); `plugboard` keeps its variants too.
    pub fn wants_client(&self, name: &str) -> bool {
        self.clients.as_ref().is_none_or(|keep| {
            keep.iter()
                .any(|k| k == name || (k == "plugboard" && name.starts_with("plugboard@")))
        })
    }

    /// Whether server `subject` is measured (`--servers`), by its full name or its first word.
    pub fn wants_server(&self, subject: &str) -> bool {
        self.servers.as_ref().is_none_or(|keep| {
            keep.iter()
                .any(|k| subject == k || subject.split(' ').next() == Some(k.as_str()))
        })
    }
}

fn comma_list(value: &str) -> Vec<String> {
    value.split(',').map(str::to_owned).collect()
}
