//! The config store under concurrent writers and writers killed mid-write, with real processes.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::support::{Home, assert_code};

fn env_keys(home: &Home, server: &str) -> Vec<String> {
    let config: Value =
        serde_json::from_slice(&std::fs::read(home.config_path()).unwrap()).unwrap();
    config["servers"][server]["env"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// Two processes each make 500 updates to their own server at the same time; none is lost.
#[test]
fn two_concurrent_writers_lose_no_update() {
    let home = Home::new();
    assert_code(
        &home.run(&["add", "a", "--no-test", "--stdio", "--", "cmd-a"]),
        0,
    );
    assert_code(
        &home.run(&["add", "b", "--no-test", "--stdio", "--", "cmd-b"]),
        0,
    );
    const UPDATES: usize = 500;
    let writers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|server| {
            let home_path = home.path().to_path_buf();
            std::thread::spawn(move || {
                for i in 0..UPDATES {
                    let status = std::process::Command::new(crate::support::plugboard_bin())
                        .args(["edit", server, "--env", &format!("K_{i}={server}{i}")])
                        .env("PLUGBOARD_HOME", &home_path)
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .status()
                        .unwrap();
                    assert!(status.success(), "update {i} of {server} failed");
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    assert_eq!(env_keys(&home, "a").len(), UPDATES);
    assert_eq!(env_keys(&home, "b").len(), UPDATES);
}

/// A writer killed with SIGKILL at random moments, 200 times: the file always parses and holds
/// every write whose command had returned success.
#[test]
fn writers_killed_at_random_moments_never_corrupt_the_file() {
    let home = Home::new();
    assert_code(
        &home.run(&["add", "s", "--no-test", "--stdio", "--", "cmd"]),
        0,
    );
    // The kill window follows how long a whole write takes on this machine (a loaded CI machine
    // is several times slower than a quiet one), so that some writers finish and some are
    // killed: twice the quickest of three writes.
    let window_us = (0..3)
        .map(|i| {
            let started = std::time::Instant::now();
            assert_code(
                &home.run(&["edit", "s", "--env", &format!("WARM_{i}=1")]),
                0,
            );
            started.elapsed().as_micros() as u64
        })
        .min()
        .unwrap()
        * 2;
    let mut succeeded = vec![];
    let mut killed = 0;
    for i in 0..200 {
        let mut child = home
            .cmd(&["edit", "s", "--env", &format!("K_{i}=v{i}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rand::random::<u64>() % window_us));
        unsafe {
            libc::kill(child.id() as i32, libc::SIGKILL);
        }
        let status = child.wait().unwrap();
        if status.success() {
            succeeded.push(format!("K_{i}"));
        } else {
            killed += 1;
        }
        let keys = env_keys(&home, "s");
        for key in &succeeded {
            assert!(keys.contains(key), "iteration {i}: lost {key}");
        }
    }
    // The next successful write clears what killed writers left behind.
    assert_code(&home.run(&["edit", "s", "--env", "FINAL=1"]), 0);
    let leftovers: Vec<_> = std::fs::read_dir(home.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    eprintln!(
        "{} writes succeeded, {killed} were killed (kill window {window_us} us)",
        succeeded.len()
    );
    assert!(leftovers.is_empty(), "stale temp files: {leftovers:?}");
    assert!(
        killed > 20,
        "the kill timing never hit a running writer ({killed})"
    );
    assert!(!succeeded.is_empty(), "no writer ever finished");
}
