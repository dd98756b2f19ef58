//! The process table as Linux's `/proc` shows it: each process's parent and process group.
//! Used to find what a server left behind and which processes a started group holds.

/// One process: its id, its parent's and its process group's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessEntry {
    pub pid: u32,
    pub ppid: u32,
    pub pgrp: u32,
}

/// Every process this user can see (empty where there is no `/proc`).
pub fn processes() -> Vec<ProcessEntry> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // After the command's `(name)`, which may hold spaces: state, ppid, pgrp, …
            let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
            let _state = fields.next()?;
            let ppid = fields.next()?.parse().ok()?;
            let pgrp = fields.next()?.parse().ok()?;
            Some(ProcessEntry { pid, ppid, pgrp })
        })
        .collect()
}
